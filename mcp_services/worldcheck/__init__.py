"""The world's checks: its invariants over the seeded state of every library service, and how varied its texts are."""
