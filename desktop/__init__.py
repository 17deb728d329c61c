"""desktop: the PySide6 cashier terminal that charges member accounts through `core`."""
