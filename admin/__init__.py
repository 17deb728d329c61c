"""admin: the `cashierctl` command for the shop's IT person and back office."""
