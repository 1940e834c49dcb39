"""A tiny canonical service for kernel tests: a ledger of accounts and transfers."""

from __future__ import annotations

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, field
from mcp_services.kernel.semantic import EmailAddress, EntityId, Money, PersonName

AccountId = EntityId("ledger.account")
TransferId = EntityId("ledger.transfer")

service = Service("ledger", "A tiny ledger used by the kernel's tests.")


@service.entity(table="accounts", prefix="acc", label="owner", search=("owner", "email"))
class Account:
    id: AccountId
    owner: PersonName
    email: EmailAddress = field(unique=True, role="holder")
    balance: Money


@service.entity(table="transfers", prefix="tr")
class Transfer:
    id: TransferId
    source_id: AccountId
    target_id: AccountId
    amount: Money


@service.seeder
def seed(ctx: ToolContext) -> None:
    ctx.insert_many(
        [Account(id=ctx.new_id("acc"), owner=p.name, email=p.email, balance=100.0) for p in ctx.world.people[:12]]
    )


@service.tool("read", intent="find", phrases=("look up the accounts",))
def list_accounts(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[Account]:
    """List accounts in id order.

    Args:
        limit: Maximum number of accounts.
        cursor: next_cursor of the previous page.
    """
    return ctx.query(Account).order_by("id").page(limit, cursor)


@service.tool("write", intent="pay", phrases=("move {amount} from {source_id} to {target_id}",))
def transfer(ctx: ToolContext, source_id: AccountId, target_id: AccountId, amount: Money) -> Account:
    """Move money between two accounts. The source is debited first, then the target is credited.

    Args:
        source_id: The account to debit.
        target_id: The account to credit.
        amount: How much to move.
    """
    source = ctx.update(ctx.get(Account, source_id), balance=round(ctx.get(Account, source_id).balance - amount, 2))
    ctx.insert(Transfer(id=ctx.new_id("tr"), source_id=source_id, target_id=target_id, amount=amount))
    # The debit and the transfer row are already written when this check fails: the kernel must undo them.
    target = ctx.get(Account, target_id)
    if source.balance < 0:
        raise ToolError.invalid_state(f"Account {source_id} has insufficient funds.")
    ctx.update(target, balance=round(target.balance + amount, 2))
    return source


@service.tool("write", intent="create")
def crash(ctx: ToolContext, owner: PersonName) -> Account:
    """A tool with a bug: writes a row, then fails with an unexpected exception.

    Args:
        owner: Owner name for the row it writes.
    """
    ctx.insert(Account(id=ctx.new_id("acc"), owner=owner, email="x@y.example", balance=1.0))
    raise RuntimeError("boom: internal detail that must not leak")
