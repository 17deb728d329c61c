"""The terminal's look: one calm style sheet with large type and touch-sized targets.

Colours carry meaning only (green approved, amber being checked, red declined or
offline); everything else is quiet grey-blue on white. Buttons are at least 56 px
high, the charge button and keypad larger.
"""

STYLE_SHEET = """
QMainWindow, QWidget#body { background: #eef1f5; }
QWidget { font-size: 17px; color: #1f2a37; }
QLabel#brandLabel { font-size: 20px; font-weight: 600; color: #2d4a6b; }
QLabel#cashierBanner { color: #4b5b6e; }
QFrame#saleCard, QFrame#signInCard { background: white; border: 1px solid #d8dee6; border-radius: 12px; padding: 4px; }
QLabel#signInTitle { font-size: 24px; font-weight: 600; padding: 8px; }
QLineEdit { font-size: 24px; min-height: 52px; padding: 4px 12px; border: 2px solid #c5ced9;
            border-radius: 8px; background: white; }
QLineEdit:focus { border-color: #3b74c4; }
QLineEdit#amountInput { font-size: 34px; min-height: 58px; }
QLabel#balanceLabel { font-size: 22px; min-height: 56px; color: #24384f; }
QLabel#balanceLabel[tone="frozen"] { color: #a3341f; }
QLabel[tone="error"] { color: #b3261e; font-size: 16px; }
QLabel#resultLabel { font-size: 24px; font-weight: 600; min-height: 72px; border-radius: 10px; padding: 6px; }
QLabel#resultLabel[tone="idle"] { background: transparent; }
QLabel#resultLabel[tone="working"] { background: #e7eef8; color: #2d4a6b; }
QLabel#resultLabel[tone="approved"] { background: #e3f4e6; color: #1e6b32; border: 2px solid #7cc28d; }
QLabel#resultLabel[tone="declined"] { background: #fdecea; color: #a3241b; border: 2px solid #ee9c94; }
QLabel#resultLabel[tone="checking"] { background: #fff4dc; color: #855a00; border: 2px solid #f0c36a; }
QFrame#holdPanel { background: #f5f7fa; border: 1px solid #d8dee6; border-radius: 8px; }
QLabel#holdInfoLabel { color: #6b7a8c; font-size: 17px; }
QLabel#holdInfoLabel[tone="hold"] { color: #24384f; font-weight: 600; }
QLabel#completePreview { font-size: 20px; color: #24384f; }
QLabel#noticeLabel { background: #e7eef8; border-radius: 8px; padding: 8px; color: #2d4a6b; }
QPushButton { min-height: 56px; padding: 0 18px; border-radius: 8px; border: 1px solid #b8c3d0;
              background: #f8fafc; font-size: 18px; }
QPushButton:pressed { background: #dfe6ee; }
QPushButton:disabled { color: #9aa6b2; background: #eef1f5; border-color: #d8dee6; }
QPushButton[role="key"] { font-size: 28px; min-height: 64px; background: white; }
QPushButton[role="primary"] { background: #2f6fb8; color: white; border: none; font-weight: 600; }
QPushButton[role="primary"]:disabled { background: #a9bdd6; color: #eef1f5; }
QPushButton[role="charge"] { background: #2e7d4f; color: white; border: none; font-size: 26px;
                             font-weight: 700; min-height: 72px; }
QPushButton[role="charge"]:disabled { background: #a7c4b3; color: #eef5f0; }
QPushButton[role="quiet"] { min-height: 44px; background: transparent; border: 1px solid #c5ced9; font-size: 16px; }
QTableWidget { background: white; border: 1px solid #d8dee6; border-radius: 8px; font-size: 16px;
               gridline-color: #edf0f4; selection-background-color: #cfe0f5; selection-color: #1f2a37; }
QHeaderView::section { background: #f3f5f8; border: none; border-bottom: 1px solid #d8dee6; padding: 6px;
                       font-size: 15px; color: #4b5b6e; }
QLabel#historyTitle { font-size: 18px; font-weight: 600; color: #2d4a6b; }
QStatusBar { background: #dfe5ec; font-size: 16px; }
QLineEdit#accountInput { min-height: 48px; }
QStatusBar QLabel { padding: 2px 12px; font-size: 16px; }
QLabel#connectionStatus[tone="ok"] { color: #1e6b32; }
QLabel#connectionStatus[tone="error"] { color: #b3261e; font-weight: 600; }
QLabel#connectionStatus[tone="checking"] { color: #855a00; }
QLabel#pendingStatus[tone="checking"] { color: #855a00; font-weight: 600; }
"""
