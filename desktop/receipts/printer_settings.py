"""The "Receipts and display" dialog: the shop's name and address on the slip, the receipt
printer (connection, address, paper, encoding, code, cut, cash drawer, automatic
printing) with a test print, and the customer display (on/off, screen, language).

Values are checked before saving (`PrinterConfig.check()` names what cannot work) and
written to the terminal's settings store under the keys `desktop.receipts.config`
reads; the main window applies them at once (`hooks.apply_settings`).
"""
from __future__ import annotations

import time

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QVBoxLayout)

from .config import (CONNECTIONS, PrinterConfig, customer_display_options, printer_config,
                     receipt_options)
from .model import Receipt
from ..i18n import Retranslates

_TEST_TXN = "TEST-d-0"
TEST_KIND = "test"               # desktop/receipts/model.layout: a test print, not a sale


class PrinterSettingsDialog(Retranslates, QDialog):
    def __init__(self, q: QSettings, service, parent=None):
        super().__init__(parent)
        self.setObjectName("printerSettingsDialog")
        self.q, self.service = q, service
        config, options, display = printer_config(q), receipt_options(q), customer_display_options(q)
        self.shop_name_input = QLineEdit(options.shop_name, objectName="shopNameInput")
        self.shop_address_input = QLineEdit(options.shop_address, objectName="shopAddressInput")
        self.connection_box = QComboBox(objectName="printerConnectionBox")
        for name in CONNECTIONS:
            self.connection_box.addItem(name, name)
        self.connection_box.setCurrentIndex(CONNECTIONS.index(config.connection))
        self.address_input = QLineEdit(config.address, objectName="printerAddressInput")
        self.paper_box = QComboBox(objectName="paperWidthBox")
        self.paper_box.addItem("80 mm", 80)
        self.paper_box.addItem("58 mm", 58)
        self.paper_box.setCurrentIndex(0 if config.paper_mm == 80 else 1)
        self.encoding_input = QLineEdit(config.encoding, objectName="printerEncodingInput")
        self.code_box = QComboBox(objectName="receiptCodeBox")
        self.code_box.addItem("QR", "qr")
        self.code_box.addItem("CODE128", "barcode")
        self.code_box.setCurrentIndex(0 if config.symbology == "qr" else 1)
        self.auto_print_check = QCheckBox(objectName="autoPrintCheck", checked=options.auto_print)
        self.cut_check = QCheckBox(objectName="cutCheck", checked=config.cut)
        self.drawer_check = QCheckBox(objectName="drawerKickCheck", checked=config.drawer_kick)
        self.display_check = QCheckBox(objectName="customerDisplayCheck", checked=display.enabled)
        self.screen_input = QSpinBox(objectName="customerScreenInput")
        self.screen_input.setRange(0, 16)
        self.screen_input.setValue(display.screen)
        self.display_language_box = QComboBox(objectName="customerLanguageBox")
        self.display_language_box.addItem("简体中文", "zh_CN")
        self.display_language_box.addItem("English", "en")
        self.display_language_box.setCurrentIndex(0 if display.language == "zh_CN" else 1)
        self.message = QLabel(objectName="printerSettingsMessage", wordWrap=True)
        self.test_button = QPushButton(objectName="testPrintButton", clicked=self.test_print)
        self.save_button = QPushButton(objectName="savePrinterSettingsButton", clicked=self.save)
        self.save_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="cancelPrinterSettingsButton", clicked=self.reject)
        for button in (self.test_button, self.save_button, self.cancel_button):
            button.setAutoDefault(False)          # Enter in a field saves nothing by surprise
        self.labels = [QLabel() for _ in range(13)]
        form = QFormLayout()
        for label, field in zip(self.labels, (
                self.shop_name_input, self.shop_address_input, self.connection_box, self.address_input,
                self.paper_box, self.encoding_input, self.code_box, self.auto_print_check, self.cut_check,
                self.drawer_check, self.display_check, self.screen_input, self.display_language_box)):
            form.addRow(label, field)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(640)
        service.printed.connect(self._printed)
        service.notPrinted.connect(self._not_printed)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Receipts and customer display"))
        for label, text in zip(self.labels, (
                self.tr("Shop name"), self.tr("Shop address"), self.tr("Printer connection"),
                self.tr("Printer address"), self.tr("Paper width"), self.tr("Printer encoding"),
                self.tr("Receipt number as"), self.tr("Print after every sale"), self.tr("Cut the paper"),
                self.tr("Open the cash drawer after a cash top-up"), self.tr("Customer display"),
                self.tr("Customer display screen (0 = main)"), self.tr("Customer display language"))):
            label.setText(text)
        names = {"none": self.tr("No printer"), "usb": self.tr("USB"), "network": self.tr("Network (TCP)"),
                 "serial": self.tr("Serial port"), "cups": self.tr("CUPS printer queue"),
                 "lp": self.tr("lp print queue"), "win32": self.tr("Windows printer"),
                 "file": self.tr("Device file (e.g. /dev/usb/lp0)")}
        for index in range(self.connection_box.count()):
            self.connection_box.setItemText(index, names.get(self.connection_box.itemData(index),
                                                             self.connection_box.itemData(index)))
        self.address_input.setPlaceholderText(self.tr("e.g. 192.168.1.50, 0x0416:0x5011, /dev/ttyUSB0, COM3"))
        self.test_button.setText(self.tr("Test print"))
        self.save_button.setText(self.tr("Save"))
        self.cancel_button.setText(self.tr("Cancel"))

    def config(self) -> PrinterConfig:
        current = printer_config(self.q)
        return PrinterConfig(
            connection=self.connection_box.currentData(), address=self.address_input.text().strip(),
            paper_mm=self.paper_box.currentData(), encoding=self.encoding_input.text().strip() or "gb18030",
            profile=current.profile, symbology=self.code_box.currentData(), native_qr=current.native_qr,
            cut=self.cut_check.isChecked(), drawer_kick=self.drawer_check.isChecked(),
            check_paper=current.check_paper, timeout_s=current.timeout_s)

    def _checked(self) -> PrinterConfig | None:
        config = self.config()
        try:
            config.check()
        except ValueError as exc:
            field, _, reason = str(exc).partition(": ")
            words = {"printer address": self.tr("Printer address"), "printer encoding": self.tr("Printer encoding")}
            self.message.setText(self.tr("%1: %2").replace("%1", words.get(field, field)).replace("%2", reason))
            return None
        return config

    def test_print(self) -> None:
        config = self._checked()
        if config is None:
            return
        from .model import ReceiptContext
        ctx = ReceiptContext(self.shop_name_input.text().strip(), self.shop_address_input.text().strip(),
                             self.service.terminal_id, "", "", self.service.language)
        from .printer import print_receipt
        # a test, and says so: no sale, no amount, today's date (not a sale of 1970)
        receipt = Receipt(_TEST_TXN, TEST_KIND, "", 0, None, int(time.time() * 1000), ctx)
        self.message.setText(self.tr("Printing a test slip…"))
        self.service.worker.run(lambda: print_receipt(receipt, config), lambda _d: self._printed(receipt),
                                lambda exc: self._not_printed(receipt, getattr(exc, "reason", "failed"),
                                                              getattr(exc, "detail", str(exc))))

    def _printed(self, receipt) -> None:
        if receipt.txn_id == _TEST_TXN:
            self.message.setText(self.tr("The test slip was sent to the printer."))

    def _not_printed(self, receipt, reason: str, detail: str) -> None:
        if receipt.txn_id == _TEST_TXN:
            self.message.setText(self.tr("The test slip did not print (%1): %2").replace("%1", reason)
                                 .replace("%2", detail))

    def save(self) -> None:
        config = self._checked()
        if config is None:
            return
        q = self.q
        q.setValue("shop/name", self.shop_name_input.text().strip())
        q.setValue("shop/address", self.shop_address_input.text().strip())
        for key, value in (("printer", config.connection), ("address", config.address),
                           ("paper_mm", str(config.paper_mm)), ("encoding", config.encoding),
                           ("code", config.symbology), ("cut", str(config.cut).lower()),
                           ("drawer_kick", str(config.drawer_kick).lower()),
                           ("auto_print", str(self.auto_print_check.isChecked()).lower())):
            q.setValue(f"receipts/{key}", value)
        q.setValue("customer_display/enabled", str(self.display_check.isChecked()).lower())
        q.setValue("customer_display/screen", str(self.screen_input.value()))
        q.setValue("customer_display/language", self.display_language_box.currentData())
        q.sync()
        self.accept()
