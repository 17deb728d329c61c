"""Receipts on thermal printers, through python-escpos: the receipt is composed on the
library's Dummy printer (so the bytes tested are the bytes sent), then written to the
configured printer in one go: USB, network (raw port 9100), serial, or a printer name
of CUPS / lp (Unix) or the Windows spooler, as far as the library offers each here.

Paper is 58 mm (32 columns) or 80 mm (48 columns). Text is sent in the encoding the
printer's character mode needs: GB18030 by default (Chinese printers), any other
multi-byte encoding python knows (gbk, big5, shift_jis, euc_kr), or 'auto' to let
python-escpos pick single-byte code pages (Western printers). Each slip sets the
printer's mode itself after ESC @: FS & (Chinese character mode) for a multi-byte
encoding, FS . (cancelled) for single-byte code pages. The receipt number is a
QR code (printed by the printer itself, or sent as an image for printers without QR
support) or a CODE128 barcode where it fits the paper; then the paper is cut, and after
a cash top-up the cash drawer can be kicked. A shift's Z / X slip (receipts/shift_slip.py)
is composed and sent the same way (`print_items`).

A printer that is off, unplugged or out of paper raises `ReceiptNotPrinted` with a
reason code; the caller (the terminal) has applied the operation already and only
offers a reprint. Nothing here ever touches the ledger.
"""
from __future__ import annotations

import copy
import logging

from escpos import printer as escpos_printer
from escpos.exceptions import DeviceNotFoundError
from escpos.exceptions import Error as EscposError

from .config import MULTIBYTE_ENCODINGS, PrinterConfig  # noqa: F401  (PrinterConfig: re-exported)
from .model import RULE, Code, Line, Receipt, layout
from .reasons import (FAILED, NOT_CONFIGURED, OUT_OF_PAPER, TIMEOUT, UNREACHABLE, UNSUPPORTED,  # noqa: F401
                      ReceiptNotPrinted)

log = logging.getLogger(__name__)

DEFAULT_NETWORK_PORT = 9100
CHINESE_MODE_ON, CHINESE_MODE_OFF = b"\x1c\x26", b"\x1c\x2e"     # ESC/POS FS & / FS .
DEFAULT_SERIAL_BAUD = 9600


# ---------------------------------------------------------------- composing

def _write(p, s: str, encoding: str) -> None:
    enc = encoding.lower()
    if enc in MULTIBYTE_ENCODINGS:
        # The printer's character mode takes these bytes as they are (python-escpos's own
        # magic encoding does the same for GB18030); no command bytes are written here.
        p._raw(s.encode(enc, errors="replace"))
    elif enc == "auto":
        p.text(s)
    else:
        p.charcode(enc.upper())
        p.text(s)


def compose(receipt: Receipt, config: PrinterConfig, *, kick_drawer: bool = False) -> bytes:
    """The ESC/POS bytes of `receipt` for `config`'s printer (composed with python-escpos)."""
    return compose_items(layout(receipt, config.columns, symbology=config.symbology), config,
                         kick_drawer=kick_drawer)


def compose_items(items: list, config: PrinterConfig, *, kick_drawer: bool = False) -> bytes:
    """The ESC/POS bytes of laid-out `items` (Line, RULE, Code: a receipt's or a shift
    slip's, receipts/shift_slip.py) for `config`'s printer."""
    p = escpos_printer.Dummy(profile=config.profile or None)
    columns = config.columns
    if p.profile.profile_data["media"]["width"].get("pixels") == "Unknown":
        # the default profile knows no paper width: give it ours (image centring), on a copy
        p.profile.profile_data = copy.deepcopy(p.profile.profile_data)
        p.profile.profile_data["media"]["width"]["pixels"] = columns * 12
    p.hw("INIT")
    # the printer's character mode, set here rather than trusted to its switches: FS &
    # (Chinese / double-byte mode on) for a multi-byte encoding, FS . (off) otherwise
    p._raw(CHINESE_MODE_ON if config.encoding.lower() in MULTIBYTE_ENCODINGS else CHINESE_MODE_OFF)
    for item in items:
        if item == RULE:
            p.set_with_default()
            _write(p, "-" * columns + "\n", config.encoding)
        elif isinstance(item, Code):
            p.set_with_default(align="center")
            if item.symbology == "barcode":
                p.barcode("{B" + item.data, "CODE128", height=64, width=2, pos="OFF",
                          function_type="B")
                _write(p, "\n", config.encoding)
            else:
                size = 6 if columns <= 32 else 8
                p.qr(item.data, size=size, native=config.native_qr)     # centred by ESC a
        else:
            assert isinstance(item, Line)
            p.set_with_default(align=item.align, bold=item.bold, double_height=item.big,
                               double_width=item.big)
            _write(p, item.text + "\n", config.encoding)
    p.set_with_default()
    if config.cut:
        p.cut()
    else:
        p.print_and_feed(4)
    if kick_drawer:
        p.cashdraw(2)
    return p.output


def kicks_drawer(receipt: Receipt, config: PrinterConfig) -> bool:
    """Open the drawer after a cash top-up (when the shop wants it), never for a reprint."""
    return config.drawer_kick and receipt.kind == "credit" and receipt.method in ("", "cash") \
        and not receipt.reprint


# ---------------------------------------------------------------- sending

def _split_address(address: str, default_port: int) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if sep and port.isdigit():
        return host, int(port)
    return address, default_port


def open_printer(config: PrinterConfig):
    """A python-escpos printer object for `config` (not yet connected)."""
    config.check()
    profile = {"profile": config.profile} if config.profile else {}
    kind = config.connection
    classes = {"usb": "Usb", "network": "Network", "serial": "Serial", "cups": "CupsPrinter",
               "lp": "LP", "win32": "Win32Raw", "file": "File"}
    if kind == "none":
        raise ReceiptNotPrinted(NOT_CONFIGURED, "no receipt printer is set up")
    cls = getattr(escpos_printer, classes[kind])
    if not cls.is_usable():
        raise ReceiptNotPrinted(UNSUPPORTED, f"{kind} printers need a library this installation "
                                             "does not have (pyusb, pyserial, pycups or pywin32)")
    if kind == "usb":
        vendor, _, product = config.address.partition(":")
        try:
            ids = int(vendor, 16), int(product, 16)
        except ValueError:
            raise ValueError("printer address: a USB printer is vendor:product in hex, "
                             "e.g. 0x0416:0x5011") from None
        return cls(*ids, timeout=int(config.timeout_s * 1000), **profile)
    if kind == "network":
        host, port = _split_address(config.address, DEFAULT_NETWORK_PORT)
        return cls(host, port, timeout=config.timeout_s, **profile)
    if kind == "serial":
        dev, baud = _split_address(config.address, DEFAULT_SERIAL_BAUD)
        return cls(dev, baudrate=baud, timeout=config.timeout_s, **profile)
    if kind == "file":
        return cls(config.address, **profile)
    return cls(config.address, **profile)


def send(data: bytes, config: PrinterConfig) -> None:
    """Write composed bytes to the configured printer; raises ReceiptNotPrinted."""
    try:
        p = open_printer(config)
    except ValueError as exc:
        raise ReceiptNotPrinted(NOT_CONFIGURED, str(exc)) from None
    try:
        p.open()
        if config.check_paper and config.connection in ("usb", "serial", "network"):
            try:
                paper = p.paper_status()
            except Exception as exc:          # the printer does not answer status queries
                log.info("printer paper status unknown (%s)", type(exc).__name__)
                paper = 2
            if paper == 0:
                raise ReceiptNotPrinted(OUT_OF_PAPER, "the printer reports no paper")
        p._raw(data)
    except ReceiptNotPrinted:
        raise
    except DeviceNotFoundError as exc:
        raise ReceiptNotPrinted(UNREACHABLE, str(exc).strip()) from None
    except TimeoutError as exc:
        raise ReceiptNotPrinted(TIMEOUT, str(exc) or "the printer did not answer in time") from None
    except (OSError, EscposError) as exc:
        raise ReceiptNotPrinted(UNREACHABLE, f"{type(exc).__name__}: {exc}") from None
    except Exception as exc:                  # a driver's bug must never reach the sale
        raise ReceiptNotPrinted(FAILED, f"{type(exc).__name__}: {exc}") from None
    finally:
        try:
            p.close()
        except Exception:                     # closing a dead printer must not hide the cause
            pass


def print_receipt(receipt: Receipt, config: PrinterConfig) -> bytes:
    """Compose and send one receipt; returns the bytes sent. Raises ReceiptNotPrinted."""
    if not config.enabled:
        raise ReceiptNotPrinted(NOT_CONFIGURED, "no receipt printer is set up")
    data = compose(receipt, config, kick_drawer=kicks_drawer(receipt, config))
    send(data, config)
    return data


def print_items(items: list, config: PrinterConfig) -> bytes:
    """Compose and send laid-out items (a shift's Z / X slip); returns the bytes sent.
    Raises ReceiptNotPrinted."""
    if not config.enabled:
        raise ReceiptNotPrinted(NOT_CONFIGURED, "no receipt printer is set up")
    data = compose_items(items, config)
    send(data, config)
    return data


def self_test() -> int:
    """Compose a Chinese receipt with a printed and an image QR code (for `--self-test`:
    proves python-escpos, its printer profiles and Pillow are installed). Returns its size."""
    from .model import ReceiptContext
    receipt = Receipt("SELFTEST-d-0", "deduct", "0000", 1, 0, 0, ReceiptContext("自检", language="zh_CN"))
    native = compose(receipt, PrinterConfig(paper_mm=58))
    image = compose(receipt, PrinterConfig(paper_mm=80, native_qr=False))
    if "自检".encode("gb18030") not in native or b"\x1dv0" not in image:
        raise RuntimeError("receipt composition is broken")
    return len(native) + len(image)
