"""Settings of receipts, refunds of earlier sales and the customer display, read from
the terminal's QSettings store (the same INI file / native store as the rest of the
terminal's settings, under their own groups). Read strictly: a value out of range or
misspelled falls back to its default, and `PrinterConfig.check()` names the setting
that cannot work.

INI keys (all optional)::

    [shop]              name, address                  printed at the top of every receipt
    [receipts]          auto_print (true)              print after every applied charge, sale,
                                                       refund, top-up and card close
                        language (the UI's)            en or zh_CN
                        printer (none)                 none usb network serial cups lp win32 file
                        address                        see PrinterConfig
                        paper_mm (80)                  58 or 80
                        encoding (gb18030)             gb18030 gbk big5 shift_jis euc_kr, auto, or a code page
                        profile                        a python-escpos printer profile (e.g. TM-T88V)
                        code (qr)                      qr or barcode
                        native_qr (true)               false: the QR code is sent as an image
                        cut (true), drawer_kick (false), check_paper (false), timeout_s (3)
    [refunds]           window_days (the retention)    sales older than this are not refunded at the till
    [customer_display]  enabled (false), screen (1: the second screen), language (zh_CN),
                        geometry (none)                x,y,width,height: a window there when
                                                       the till has one screen (else it is off)
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings

from .model import COLUMNS_BY_PAPER_MM

CONNECTIONS = ("none", "usb", "network", "serial", "cups", "lp", "win32", "file")
MULTIBYTE_ENCODINGS = ("gb18030", "gbk", "gb2312", "big5", "shift_jis", "euc_kr")
DEFAULT_ENCODING = "gb18030"
DEFAULT_TIMEOUT_S = 3.0
MAX_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True)
class PrinterConfig:
    """How to reach the printer and what it needs. `address` by connection:
    usb '0x0416:0x5011' (vendor:product), network 'host' or 'host:port',
    serial '/dev/ttyUSB0' or 'COM3', optionally ':baud', cups / lp / win32 the
    printer's name, file a device or file path (e.g. /dev/usb/lp0)."""
    connection: str = "none"
    address: str = ""
    paper_mm: int = 80
    encoding: str = DEFAULT_ENCODING
    profile: str = ""                # a python-escpos printer profile name ('' = default)
    symbology: str = "qr"            # qr or barcode (falls back to qr where it does not fit)
    native_qr: bool = True           # False: send the QR code as an image
    cut: bool = True
    drawer_kick: bool = False        # after a cash top-up
    check_paper: bool = False        # ask the printer for its paper sensor first
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def columns(self) -> int:
        return COLUMNS_BY_PAPER_MM.get(self.paper_mm, 48)

    @property
    def enabled(self) -> bool:
        return self.connection != "none"

    def check(self) -> None:
        """Raise ValueError naming the setting and the reason for a setting that cannot work."""
        if self.connection not in CONNECTIONS:
            raise ValueError(f"printer connection: must be one of {', '.join(CONNECTIONS)}")
        if self.paper_mm not in COLUMNS_BY_PAPER_MM:
            raise ValueError("paper width: must be 58 or 80 mm")
        if self.symbology not in ("qr", "barcode"):
            raise ValueError("receipt code: must be qr or barcode")
        enc = self.encoding.lower()
        if enc != "auto":
            try:
                "票".encode(enc) if enc in MULTIBYTE_ENCODINGS else "a".encode(enc)
            except LookupError:
                raise ValueError(f"printer encoding: {self.encoding!r} is not an encoding") from None
        if self.enabled and self.connection != "none" and not self.address:
            raise ValueError(f"printer address: must not be empty for a {self.connection} printer")


@dataclass(frozen=True, slots=True)
class ReceiptOptions:
    auto_print: bool = True
    language: str = ""               # '' = the terminal's UI language
    shop_name: str = ""
    shop_address: str = ""
    refund_window_s: int | None = None       # None: the ledger's retention


@dataclass(frozen=True, slots=True)
class CustomerDisplayOptions:
    enabled: bool = False
    screen: int = 1                  # index in QGuiApplication.screens(); 1 = the second one
    language: str = "zh_CN"
    geometry: tuple[int, int, int, int] | None = None   # placed by hand: a window on a one-screen till


def _geometry(q: QSettings, key: str) -> tuple[int, int, int, int] | None:
    """"x,y,width,height" (whole numbers, a visible size), else None."""
    value = q.value(key, "")
    parts = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    try:
        x, y, w, h = (int(str(p).strip()) for p in parts)
    except ValueError:
        return None
    return (x, y, w, h) if 100 <= w <= 10_000 and 100 <= h <= 10_000 else None


def _text(q: QSettings, key: str, default: str = "") -> str:
    value = q.value(key, default)
    return str(value).strip() if value is not None else default


def _bool(q: QSettings, key: str, default: bool) -> bool:
    value = _text(q, key, "").lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return default


def _int(q: QSettings, key: str, default: int, low: int, high: int) -> int:
    value = _text(q, key, "")
    if not value.isascii() or not value.isdigit() or not low <= int(value) <= high:
        return default
    return int(value)


def printer_config(q: QSettings) -> PrinterConfig:
    connection = _text(q, "receipts/printer", "none").lower()
    return PrinterConfig(
        connection=connection if connection in CONNECTIONS else "none",
        address=_text(q, "receipts/address"),
        paper_mm=58 if _int(q, "receipts/paper_mm", 80, 58, 80) == 58 else 80,
        encoding=_text(q, "receipts/encoding", DEFAULT_ENCODING) or DEFAULT_ENCODING,
        profile=_text(q, "receipts/profile"),
        symbology="barcode" if _text(q, "receipts/code", "qr").lower() == "barcode" else "qr",
        native_qr=_bool(q, "receipts/native_qr", True),
        cut=_bool(q, "receipts/cut", True),
        drawer_kick=_bool(q, "receipts/drawer_kick", False),
        check_paper=_bool(q, "receipts/check_paper", False),
        timeout_s=float(_int(q, "receipts/timeout_s", int(DEFAULT_TIMEOUT_S), 1, MAX_TIMEOUT_S)))


def receipt_options(q: QSettings) -> ReceiptOptions:
    language = _text(q, "receipts/language")
    days = _int(q, "refunds/window_days", 0, 1, 400)
    return ReceiptOptions(auto_print=_bool(q, "receipts/auto_print", True),
                          language=language if language in ("en", "zh_CN") else "",
                          shop_name=_text(q, "shop/name"), shop_address=_text(q, "shop/address"),
                          refund_window_s=days * 86400 if days else None)


def customer_display_options(q: QSettings) -> CustomerDisplayOptions:
    language = _text(q, "customer_display/language", "zh_CN")
    return CustomerDisplayOptions(enabled=_bool(q, "customer_display/enabled", False),
                                  screen=_int(q, "customer_display/screen", 1, 0, 16),
                                  language=language if language in ("en", "zh_CN") else "zh_CN",
                                  geometry=_geometry(q, "customer_display/geometry"))
