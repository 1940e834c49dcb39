"""A tiny canonical service for kernel tests: a ledger of accounts and transfers."""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import ForeignKey, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import EmailAddress, EntityId, Money, PersonName

AccountId = EntityId("ledger.account")


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[str] = mapped_column(primary_key=True)
    owner: Mapped[str]
    email: Mapped[str] = mapped_column(unique=True)
    balance: Mapped[float]


class Transfer(Base):
    __tablename__ = "transfers"
    id: Mapped[str] = mapped_column(primary_key=True)
    source_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    target_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    amount: Mapped[float]


service = Service("ledger", "A tiny ledger used by the kernel's tests.", Base)


class AccountOut(BaseModel):
    id: AccountId
    owner: PersonName
    email: EmailAddress
    balance: Money


@service.seeder
def seed(ctx: ToolContext) -> None:
    for person in ctx.world.people[:12]:
        ctx.db.add(Account(id=ctx.new_id("acc"), owner=person.name, email=person.email, balance=100.0))


@service.tool("read")
def list_accounts(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[AccountOut]:
    """List accounts in id order.

    Args:
        limit: Maximum number of accounts.
        cursor: next_cursor of the previous page.
    """
    rows, total, nxt = paginate(ctx, select(Account).order_by(Account.id), limit, cursor)
    return Page[AccountOut](items=[AccountOut.model_validate(r, from_attributes=True) for r in rows], total=total, next_cursor=nxt)


@service.tool("write")
def transfer(ctx: ToolContext, source_id: AccountId, target_id: AccountId, amount: Money) -> AccountOut:
    """Move money between two accounts. The source is debited first, then the target is credited.

    Args:
        source_id: The account to debit.
        target_id: The account to credit.
        amount: How much to move.
    """
    source = ctx.get(Account, source_id, "account")
    source.balance = round(source.balance - amount, 2)
    ctx.db.add(Transfer(id=ctx.new_id("tr"), source_id=source_id, target_id=target_id, amount=amount))
    ctx.db.flush()
    # The debit and the transfer row are already written when this check fails: the kernel must undo them.
    target = ctx.get(Account, target_id, "account")
    if source.balance < 0:
        raise ToolError.invalid_state(f"Account {source_id} has insufficient funds.")
    target.balance = round(target.balance + amount, 2)
    return AccountOut.model_validate(source, from_attributes=True)


@service.tool("write")
def crash(ctx: ToolContext, owner: PersonName) -> AccountOut:
    """A tool with a bug: writes a row, then fails with an unexpected exception.

    Args:
        owner: Owner name for the row it writes.
    """
    ctx.db.add(Account(id=ctx.new_id("acc"), owner=owner, email="x@y.example", balance=1.0))
    ctx.db.flush()
    raise RuntimeError("boom: internal detail that must not leak")
