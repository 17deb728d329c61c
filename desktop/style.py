"""The terminal's look: one calm style sheet with large type and touch-sized targets.

Colours carry meaning only (green approved, amber being checked, red declined or
offline); everything else is quiet grey-blue on white. Sizes are for a 1024x768
screen (buttons at least 46 px high, the charge button and keypad larger) and grow
with the window (`style_sheet(scale)`, `scale_for`): 1280x800 a little, 1920x1080
by 40 %, fonts included.
"""
import re

MAX_SCALE = 1.6

STYLE_SHEET = """
QMainWindow, QWidget#body { background: #eef1f5; }
QWidget { font-size: 16px; color: #1f2a37; }
QLabel#brandLabel { font-size: 20px; font-weight: 600; color: #2d4a6b; }
QLabel#cashierBanner { color: #4b5b6e; }
QFrame#saleCard, QFrame#signInCard, QFrame#lockCard { background: white; border: 1px solid #d8dee6; border-radius: 12px; padding: 4px; }
QLabel#signInTitle, QLabel#lockTitle { font-size: 24px; font-weight: 600; padding: 8px; }
QLabel#lockInfo { color: #4b5b6e; }
QLineEdit { font-size: 22px; min-height: 38px; padding: 2px 10px; border: 2px solid #c5ced9;
            border-radius: 8px; background: white; }
QLineEdit:focus { border-color: #3b74c4; }
QLineEdit#amountInput { font-size: 30px; min-height: 44px; }
QLabel#balanceLabel { font-size: 19px; min-height: 50px; color: #24384f; }
QLabel#balanceLabel[tone="frozen"] { color: #a3341f; }
QLabel[tone="error"] { color: #b3261e; font-size: 16px; }
QLabel#resultLabel { font-size: 19px; font-weight: 600; border-radius: 10px; padding: 4px; }
QLabel#resultLabel[fit="smaller"] { font-size: 16px; }
QLabel#resultLabel[fit="smallest"] { font-size: 14px; }
QLabel#resultLabel[tone="idle"] { background: transparent; }
QLabel#resultLabel[tone="working"] { background: #e7eef8; color: #2d4a6b; }
QLabel#resultLabel[tone="approved"] { background: #e3f4e6; color: #1e6b32; border: 2px solid #7cc28d; }
QLabel#resultLabel[tone="declined"] { background: #fdecea; color: #a3241b; border: 2px solid #ee9c94; }
QLabel#resultLabel[tone="checking"] { background: #fff4dc; color: #855a00; border: 2px solid #f0c36a; }
QFrame#holdPanel { background: #f5f7fa; border: 1px solid #d8dee6; border-radius: 8px; }
QLabel#holdInfoLabel { color: #6b7a8c; font-size: 17px; }
QLabel#holdInfoLabel[tone="hold"] { color: #24384f; font-weight: 600; }
QLabel#completePreview { font-size: 20px; color: #24384f; }
/* the split sale's rest, the cash handed over and the change: read from across the counter */
QLabel#splitRest, QLabel#splitChange { font-size: 34px; font-weight: 700; color: #24384f; }
QLineEdit#splitTenderedInput { font-size: 34px; min-height: 50px; }
QLabel#noticeLabel { background: #e7eef8; border-radius: 8px; padding: 2px 8px; color: #2d4a6b; font-size: 15px; }
QLabel#noticeLabel[tone="none"] { background: transparent; }
QPushButton { min-height: 46px; padding: 0 10px; border-radius: 8px; border: 1px solid #b8c3d0;
              background: #f8fafc; font-size: 18px; }
QPushButton:pressed { background: #dfe6ee; }
QPushButton:disabled { color: #9aa6b2; background: #eef1f5; border-color: #d8dee6; }
QPushButton[role="key"] { font-size: 26px; min-height: 48px; min-width: 56px; background: white; }
QPushButton[role="primary"] { background: #2f6fb8; color: white; border: none; font-weight: 600; }
QPushButton[role="primary"]:disabled { background: #a9bdd6; color: #eef1f5; }
QPushButton[role="charge"] { background: #2e7d4f; color: white; border: none; font-size: 23px;
                             font-weight: 700; min-height: 56px; }
QPushButton[role="charge"]:disabled { background: #a7c4b3; color: #eef5f0; }
QPushButton[role="choice"] { border: 1px solid #b8c3d0; font-weight: 400; }
QPushButton[role="choice"]:checked { background: #24384f; color: white; border: 3px solid #0f1d2e;
                                     font-weight: 700; }
QPushButton[role="quiet"] { min-height: 38px; background: transparent; border: 1px solid #c5ced9; font-size: 16px; }
QTableView { background: white; border: 1px solid #d8dee6; border-radius: 8px; font-size: 16px;
               gridline-color: #edf0f4; selection-background-color: #cfe0f5; selection-color: #1f2a37; }
QHeaderView::section { background: #f3f5f8; border: none; border-bottom: 1px solid #d8dee6; padding: 6px;
                       font-size: 15px; color: #4b5b6e; }
QLabel#historyTitle { font-size: 18px; font-weight: 600; color: #2d4a6b; }
QStatusBar { background: #dfe5ec; font-size: 16px; }
QLineEdit#accountInput { min-height: 40px; }
QStatusBar QLabel { padding: 2px 12px; font-size: 16px; }
QLabel#connectionStatus[tone="ok"] { color: #1e6b32; }
QLabel#connectionStatus[tone="error"] { color: #b3261e; font-weight: 600; }
QLabel#connectionStatus[tone="checking"] { color: #855a00; }
QLabel#pendingStatus[tone="checking"] { color: #855a00; font-weight: 600; }
"""


def style_sheet(scale: float = 1.0) -> str:
    """STYLE_SHEET with every size (fonts, heights, paddings) times `scale`."""
    if abs(scale - 1.0) < 1e-3:
        return STYLE_SHEET
    return re.sub(r"(\d+)px", lambda m: f"{max(1, round(int(m.group(1)) * scale))}px", STYLE_SHEET)


def scale_for(width_px: int, height_px: int) -> float:
    """How much larger than the 1024x768 design the window is (1.0 .. MAX_SCALE),
    in steps of 0.1 so that a small resize does not restyle the window."""
    ratio = min(width_px / 1024, height_px / 740)
    return max(1.0, min(MAX_SCALE, int(ratio * 10) / 10))
