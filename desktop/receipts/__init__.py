"""Receipts (小票) of the terminal: a receipt model built from an operation's answer and
the terminal's context (`model`), printed on thermal printers through python-escpos
(`printer`), drawn as a PNG/PDF preview with Qt (`preview`), kept and printed off the
UI thread with a reprint of the last one or any from the history (`service`), and the
refund of an earlier sale by its receipt number (`earlier`); a shift's Z / X slip
(`shift_slip`) goes through the same printer and preview.
"""
