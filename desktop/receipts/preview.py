"""The receipt drawn with Qt, line for line as the thermal printer prints it: a PNG (or
a QImage for the screen) at the printer's own 8 dots/mm, and a PDF the width of the paper.

Both draw `model.layout`, the same lines the ESC/POS renderer sends, in a CJK monospace
font where one column is half a Chinese character, so a preview looks like the slip
(`render_items` draws any laid-out lines: a shift's Z / X slip too). For the docs, for
shops without a printer, and for the reprint dialog.
"""
from __future__ import annotations

from pathlib import Path

import barcode
import qrcode
from PySide6.QtCore import QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QImage, QPageSize, QPainter, QPdfWriter

from .model import COLUMNS_BY_PAPER_MM, RULE, Code, Line, Receipt, layout

DOTS_PER_MM = 8                      # 203 dpi, what 58 / 80 mm thermal printers have
COLUMN_DOTS, LINE_DOTS = 12, 30      # font A: 12 x 24 dots, plus line spacing
MARGIN_DOTS = 16
QR_MODULE_DOTS = {32: 6, 48: 8}
_FONT_FAMILIES = ("Noto Sans Mono CJK SC", "Noto Sans Mono CJK TC", "Sarasa Mono SC",
                  "WenQuanYi Zen Hei Mono", "NSimSun", "SimSun", "Monospace")


def _font(pixel_size: int, bold: bool) -> QFont:
    available = set(QFontDatabase.families())
    family = next((f for f in _FONT_FAMILIES if f in available), "Monospace")
    font = QFont(family)
    font.setPixelSize(pixel_size)
    font.setBold(bold)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def _code_height(item: Code, columns: int) -> int:
    if item.symbology == "barcode":
        return 64 + 16
    q = qrcode.QRCode(border=0)
    q.add_data(item.data)
    q.make(fit=True)
    return len(q.get_matrix()) * QR_MODULE_DOTS.get(columns, 8) + 16


def _height(items: list, columns: int) -> int:
    h = 2 * MARGIN_DOTS
    for item in items:
        if isinstance(item, Code):
            h += _code_height(item, columns)
        elif isinstance(item, Line) and item.big:
            h += 2 * LINE_DOTS
        else:
            h += LINE_DOTS
    return h


def _paint(painter: QPainter, items: list, columns: int) -> None:
    """Draw in printer dots: width = columns * 12 (+ margins)."""
    width = columns * COLUMN_DOTS
    x0, y = MARGIN_DOTS, MARGIN_DOTS
    black = QColor("black")
    for item in items:
        if item == RULE:
            painter.setPen(black)
            painter.drawLine(x0, y + LINE_DOTS // 2, x0 + width, y + LINE_DOTS // 2)
            y += LINE_DOTS
        elif isinstance(item, Code):
            if item.symbology == "barcode":
                modules = barcode.get("code128", item.data).build()[0]
                left = x0 + (width - 2 * len(modules)) // 2
                for i, bit in enumerate(modules):
                    if bit == "1":
                        painter.fillRect(left + 2 * i, y + 8, 2, 64, black)
            else:
                q = qrcode.QRCode(border=0)
                q.add_data(item.data)
                q.make(fit=True)
                matrix, size = q.get_matrix(), QR_MODULE_DOTS.get(columns, 8)
                left = x0 + (width - len(matrix) * size) // 2
                for r, row in enumerate(matrix):
                    for c, on in enumerate(row):
                        if on:
                            painter.fillRect(left + c * size, y + 8 + r * size, size, size, black)
            y += _code_height(item, columns)
        else:
            scale = 2 if item.big else 1
            painter.setFont(_font(24 * scale, item.bold))
            painter.setPen(black)
            flags = {"left": Qt.AlignmentFlag.AlignLeft, "center": Qt.AlignmentFlag.AlignHCenter,
                     "right": Qt.AlignmentFlag.AlignRight}[item.align]
            painter.drawText(QRectF(x0, y, width, LINE_DOTS * scale),
                             flags | Qt.AlignmentFlag.AlignVCenter, item.text)
            y += LINE_DOTS * scale


def render_image(receipt: Receipt, paper_mm: int = 80, *, symbology: str = "qr") -> QImage:
    """The receipt as a white image, one pixel per printer dot."""
    columns = COLUMNS_BY_PAPER_MM.get(paper_mm, 48)
    return render_items(layout(receipt, columns, symbology=symbology), columns)


def render_items(items: list, columns: int) -> QImage:
    """Laid-out items (a receipt's, or a shift's Z / X slip) as a white image."""
    image = QImage(columns * COLUMN_DOTS + 2 * MARGIN_DOTS, _height(items, columns), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    _paint(painter, items, columns)
    painter.end()
    return image


def save_png(receipt: Receipt, path: str | Path, paper_mm: int = 80, *, symbology: str = "qr") -> Path:
    path = Path(path)
    if not render_image(receipt, paper_mm, symbology=symbology).save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path


def save_pdf(receipt: Receipt, path: str | Path, paper_mm: int = 80, *, symbology: str = "qr") -> Path:
    """A one-page PDF as wide as the paper and as long as the receipt."""
    path = Path(path)
    columns = COLUMNS_BY_PAPER_MM.get(paper_mm, 48)
    items = layout(receipt, columns, symbology=symbology)
    width_dots, height_dots = columns * COLUMN_DOTS + 2 * MARGIN_DOTS, _height(items, columns)
    writer = QPdfWriter(str(path))
    writer.setResolution(DOTS_PER_MM * 254 // 10)      # dots per inch: one PDF unit per dot
    writer.setPageSize(QPageSize(QSizeF(width_dots / DOTS_PER_MM, height_dots / DOTS_PER_MM),
                                 QPageSize.Unit.Millimeter))
    writer.setPageMargins(QMarginsF(0, 0, 0, 0))
    painter = QPainter(writer)
    _paint(painter, items, columns)
    painter.end()
    return path
