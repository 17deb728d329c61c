<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CardDialog</name>
    <message>
        <location filename="../members.py" line="370"/>
        <source>Lost card / new card</source>
        <translation>挂失 / 补卡</translation>
    </message>
    <message>
        <location filename="../members.py" line="371"/>
        <source>Account %1 %2: the old card is blocked, the new card gets the same account and balance (no money moves).</source>
        <translation>账户 %1 %2：旧卡挂失停用，新卡绑定同一账户和余额（不动资金）。</translation>
    </message>
    <message>
        <location filename="../members.py" line="374"/>
        <location filename="../members.py" line="408"/>
        <source>Old card</source>
        <translation>旧卡</translation>
    </message>
    <message>
        <location filename="../members.py" line="375"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../members.py" line="378"/>
        <source>New card (scan it)</source>
        <translation>新卡（请刷卡）</translation>
    </message>
    <message>
        <location filename="../members.py" line="379"/>
        <source>The member&apos;s cards</source>
        <translation>会员的卡</translation>
    </message>
    <message>
        <location filename="../members.py" line="389"/>
        <source>(could not be read)</source>
        <translation>（无法读取）</translation>
    </message>
    <message>
        <location filename="../members.py" line="393"/>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <location filename="../members.py" line="395"/>
        <source>%1: blocked (%2)</source>
        <translation>%1：已停用（%2）</translation>
    </message>
    <message>
        <location filename="../members.py" line="396"/>
        <source>%1: active</source>
        <translation>%1：正常</translation>
    </message>
    <message>
        <location filename="../members.py" line="398"/>
        <source>none (the account id is used as its card)</source>
        <translation>无（以账户号作卡）</translation>
    </message>
    <message>
        <location filename="../members.py" line="405"/>
        <source>Block and issue</source>
        <translation>挂失并发新卡</translation>
    </message>
    <message>
        <location filename="../members.py" line="411"/>
        <source>New card</source>
        <translation>新卡</translation>
    </message>
    <message>
        <location filename="../members.py" line="415"/>
        <source>Enter the old card, the new card, or both.</source>
        <translation>请填写旧卡、新卡，或两者都填。</translation>
    </message>
    <message>
        <location filename="../members.py" line="418"/>
        <source>New card: must differ from the old card</source>
        <translation>新卡：不能与旧卡相同</translation>
    </message>
</context>
<context>
    <name>CashMoveDialog</name>
    <message>
        <location filename="../drawer.py" line="153"/>
        <source>Cash in / cash out</source>
        <translation>存入 / 取出现金</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="154"/>
        <source>Cash put into or taken out of the drawer (no member&apos;s balance changes). Above %1 a supervisor approves.</source>
        <translation>放入或取出钱箱的现金（不改变会员余额）。超过 %1 需主管审批。</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="157"/>
        <source>Drawer</source>
        <translation>钱箱</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="158"/>
        <location filename="../drawer.py" line="170"/>
        <location filename="../drawer.py" line="196"/>
        <source>Cash in</source>
        <translation>存入现金</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="159"/>
        <location filename="../drawer.py" line="170"/>
        <location filename="../drawer.py" line="196"/>
        <source>Cash out</source>
        <translation>取出现金</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="160"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="161"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="164"/>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="165"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="166"/>
        <source>X report  (F11)</source>
        <translation>X 报表  (F11)</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="191"/>
        <source>Say what the cash is for (Note).</source>
        <translation>请在备注中说明这笔现金的用途。</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="195"/>
        <source>%1 of %2 needs a supervisor (above %3).</source>
        <translation>%1 %2 需主管审批（超过 %3）。</translation>
    </message>
</context>
<context>
    <name>CloseAccountDialog</name>
    <message>
        <location filename="../members.py" line="441"/>
        <location filename="../members.py" line="450"/>
        <source>Close account</source>
        <translation>退卡销户</translation>
    </message>
    <message>
        <location filename="../members.py" line="442"/>
        <source>Close account %1 %2 and take back the card? Nothing can be done on it afterwards.</source>
        <translation>为账户 %1 %2 退卡销户并收回卡片？销户后该账户不能再做任何操作。</translation>
    </message>
    <message>
        <location filename="../members.py" line="444"/>
        <source>Pay out in cash: %1</source>
        <translation>退还现金：%1</translation>
    </message>
    <message>
        <location filename="../members.py" line="446"/>
        <source>Bonus forfeited: %1</source>
        <translation>赠送金额作废：%1</translation>
    </message>
    <message>
        <location filename="../members.py" line="448"/>
        <source>The account has open holds: complete or release them first.</source>
        <translation>该账户有未完成的预授权：请先完成或释放。</translation>
    </message>
</context>
<context>
    <name>CloseShiftDialog</name>
    <message>
        <location filename="../report.py" line="615"/>
        <location filename="../report.py" line="642"/>
        <source>Close shift</source>
        <translation>交班</translation>
    </message>
    <message>
        <location filename="../report.py" line="616"/>
        <source>Close shift %1 of terminal %2?</source>
        <translation>确认交班：终端 %2 的第 %1 班？</translation>
    </message>
    <message>
        <location filename="../report.py" line="621"/>
        <source>Declined: %1</source>
        <translation>被拒绝：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="623"/>
        <source>Holds still open: %1 · %2</source>
        <translation>仍未结束的预授权：%1 笔 · %2</translation>
    </message>
    <message>
        <location filename="../report.py" line="625"/>
        <source>Net: %1</source>
        <translation>净额：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="627"/>
        <source>Drawer: float %1 · cash in %2 · cash out %3</source>
        <translation>钱箱：备用金 %1 · 存入 %2 · 取出 %3</translation>
    </message>
    <message>
        <location filename="../report.py" line="633"/>
        <source>Cash counted in the drawer</source>
        <translation>钱箱实点现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="634"/>
        <source>By denomination…</source>
        <translation>按面额清点…</translation>
    </message>
    <message>
        <location filename="../report.py" line="637"/>
        <source>Shift opened by %1: closing it needs a supervisor.</source>
        <translation>本班由 %1 开班：交班需要主管批准。</translation>
    </message>
    <message>
        <location filename="../report.py" line="640"/>
        <source>Closed by %1.</source>
        <translation>交班人：%1。</translation>
    </message>
    <message>
        <location filename="../report.py" line="641"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../report.py" line="641"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../report.py" line="643"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../report.py" line="671"/>
        <source>Cash expected: %1. Count the drawer and type the total.</source>
        <translation>应有现金：%1。请清点钱箱并输入合计。</translation>
    </message>
    <message>
        <location filename="../report.py" line="674"/>
        <source>Cash expected: %1 · counted: %2 · %3</source>
        <translation>应有现金：%1 · 实点：%2 · %3</translation>
    </message>
    <message>
        <location filename="../report.py" line="682"/>
        <source>Count the drawer and type the total (0 if it is empty).</source>
        <translation>请清点钱箱并输入合计（空钱箱输入 0）。</translation>
    </message>
</context>
<context>
    <name>CompleteSaleDialog</name>
    <message>
        <location filename="../dialogs.py" line="338"/>
        <location filename="../dialogs.py" line="345"/>
        <source>Complete sale</source>
        <translation>完成交易</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="340"/>
        <source>Hold of %1 on account %2. Enter the final amount: at most the hold; the rest goes back to the account.</source>
        <translation>账户 %2 已预授权 %1。请输入最终金额：不超过预授权金额，余下部分退回账户。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="344"/>
        <source>Final amount</source>
        <translation>最终金额</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="346"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="364"/>
        <source>Charge %1 · release %2</source>
        <translation>收款 %1 · 退回 %2</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="375"/>
        <source>Amount: at most %1 (the hold)</source>
        <translation>金额：最多 %1（预授权金额）</translation>
    </message>
</context>
<context>
    <name>ConfirmDialog</name>
    <message>
        <location filename="../till_dialog.py" line="293"/>
        <source>Please confirm</source>
        <translation>请确认</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="294"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>DenominationDialog</name>
    <message>
        <location filename="../drawer.py" line="258"/>
        <source>Total: %1</source>
        <translation>合计：%1</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="262"/>
        <source>Count by denomination</source>
        <translation>按面额清点</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="265"/>
        <source>Use this total</source>
        <translation>使用此合计</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="266"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>DrawerActions</name>
    <message>
        <location filename="../drawer.py" line="283"/>
        <source>Slip</source>
        <translation>小票</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="290"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="314"/>
        <source>Cash drawer…  (F10)</source>
        <translation>钱箱…  (F10)</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="404"/>
        <source>No receipt printer is set up: the slip is shown instead.</source>
        <translation>未设置小票打印机：改为显示小票。</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="410"/>
        <source>Slip printed.</source>
        <translation>小票已打印。</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="411"/>
        <source>Slip not printed: %1</source>
        <translation>小票未打印：%1</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="412"/>
        <source>Printing the slip…</source>
        <translation>正在打印小票…</translation>
    </message>
</context>
<context>
    <name>EarlierSaleDialog</name>
    <message>
        <location filename="../receipts/earlier.py" line="145"/>
        <source>Earlier sale: refund or reprint</source>
        <translation>历史交易：退款或重打小票</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="146"/>
        <source>Receipt number (scan the code on the receipt, or type it)</source>
        <translation>小票号（扫描小票上的二维码，或手动输入）</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="147"/>
        <source>e.g. T1-d-…</source>
        <translation>例如 T1-d-…</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="148"/>
        <source>Load</source>
        <translation>查询</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="149"/>
        <source>Or an account&apos;s recent history (all terminals)</source>
        <translation>或查看账户最近的交易（所有终端）</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="151"/>
        <source>Show history</source>
        <translation>查看记录</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="152"/>
        <source>Refund…</source>
        <translation>退款…</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="153"/>
        <source>Reprint</source>
        <translation>重打小票</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="154"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="156"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="156"/>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="156"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="156"/>
        <source>Refunded</source>
        <translation>已退款</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="156"/>
        <source>Balance after</source>
        <translation>交易后余额</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="157"/>
        <source>Terminal</source>
        <translation>终端</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="157"/>
        <location filename="../receipts/earlier.py" line="168"/>
        <location filename="../receipts/earlier.py" line="201"/>
        <source>Receipt number</source>
        <translation>小票号</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="174"/>
        <source>Looking up receipt %1…</source>
        <translation>正在查询小票 %1…</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="196"/>
        <source>No sale with this receipt number in the last %1 days. Check the number. An older sale cannot be refunded at the till: the back office gives the money back as a top-up.</source>
        <translation>最近 %1 天内没有此小票号的交易。请核对小票号。更早的交易不能在收银台退款：请由后台以充值方式退还。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="200"/>
        <location filename="../receipts/earlier.py" line="220"/>
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="203"/>
        <source>The central server did not answer. Try again in a moment.</source>
        <translation>中心服务器没有响应，请稍后再试。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="205"/>
        <source>The lookup failed: %1</source>
        <translation>查询失败：%1</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="222"/>
        <source>Reading the history of %1…</source>
        <translation>正在读取 %1 的交易记录…</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="250"/>
        <source>No recent operations of this account on the central server (it keeps about the last hour in detail). Scan or type the receipt number instead.</source>
        <translation>中心服务器上没有此账户最近的交易（详细记录约保留一小时）。请改为扫描或输入小票号。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="262"/>
        <source>Account opened</source>
        <translation>开户</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="262"/>
        <source>Card closed</source>
        <translation>销卡</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="263"/>
        <source>Correction</source>
        <translation>冲正</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="263"/>
        <source>Restored</source>
        <translation>恢复</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="286"/>
        <source>%1 of %2 on account %3, %4, terminal %5</source>
        <translation>%1 %2，账户 %3，%4，终端 %5</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="291"/>
        <source>Refunded so far %1; at most %2 can still be refunded.</source>
        <translation>已退款 %1；最多还可退 %2。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="294"/>
        <source>Already refunded in full (%1).</source>
        <translation>已全额退款（%1）。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="296"/>
        <source>This sale was declined: no money was taken, nothing to refund.</source>
        <translation>此笔交易未成功：未收款，无需退款。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="298"/>
        <source>Only charges and completed sales can be refunded.</source>
        <translation>只有收款和已完成的预授权交易可以退款。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="300"/>
        <source>Older than the refund window of %1 days: the back office can give the money back as a top-up.</source>
        <translation>已超过 %1 天的退款期限：请由后台以充值方式退还。</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="325"/>
        <source>Reprinting receipt %1…</source>
        <translation>正在重打小票 %1…</translation>
    </message>
    <message>
        <location filename="../receipts/earlier.py" line="150"/>
        <source>Card, phone or account number</source>
        <translation>卡号、手机号或账户号</translation>
    </message>
</context>
<context>
    <name>FloatDialog</name>
    <message>
        <location filename="../drawer.py" line="82"/>
        <location filename="../drawer.py" line="85"/>
        <source>Opening float</source>
        <translation>备用金</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="83"/>
        <source>Shift %1 opens: count the cash in the drawer and type it (0 if it is empty).</source>
        <translation>班次 %1 开班：请清点钱箱中的现金并输入（空钱箱输入 0）。</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="86"/>
        <source>Start the shift</source>
        <translation>开始本班</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="87"/>
        <source>Later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <location filename="../drawer.py" line="93"/>
        <source>Type the float (0 if the drawer is empty).</source>
        <translation>请输入备用金（空钱箱输入 0）。</translation>
    </message>
</context>
<context>
    <name>Keypad</name>
    <message>
        <location filename="../keypad.py" line="54"/>
        <source>Delete the last character</source>
        <translation>删除最后一个字符</translation>
    </message>
    <message>
        <location filename="../keypad.py" line="55"/>
        <source>Clear the field</source>
        <translation>清空此栏</translation>
    </message>
</context>
<context>
    <name>LockPage</name>
    <message>
        <location filename="../lock.py" line="86"/>
        <source>Locked</source>
        <translation>已锁定</translation>
    </message>
    <message>
        <location filename="../lock.py" line="89"/>
        <source>%1 is signed in. Enter the PIN to unlock; a supervisor can unlock with their id and PIN.</source>
        <translation>%1 已登录。输入密码解锁；主管也可用自己的工号和密码解锁。</translation>
    </message>
    <message>
        <location filename="../lock.py" line="91"/>
        <location filename="../lock.py" line="120"/>
        <source>Cashier id</source>
        <translation>收银员工号</translation>
    </message>
    <message>
        <location filename="../lock.py" line="92"/>
        <source>PIN</source>
        <translation>密码</translation>
    </message>
    <message>
        <location filename="../lock.py" line="93"/>
        <source>4 to 12 digits</source>
        <translation>4 到 12 位数字</translation>
    </message>
    <message>
        <location filename="../lock.py" line="94"/>
        <source>Unlock</source>
        <translation>解锁</translation>
    </message>
    <message>
        <location filename="../lock.py" line="110"/>
        <source>The till is locked: the scan was not used. Unlock first.</source>
        <translation>收银台已锁定：本次扫码未被使用。请先解锁。</translation>
    </message>
    <message>
        <location filename="../lock.py" line="131"/>
        <source>Checking…</source>
        <translation>正在核对…</translation>
    </message>
    <message>
        <location filename="../lock.py" line="153"/>
        <source>Only %1 or a supervisor can unlock this till.</source>
        <translation>只有 %1 或主管可以解锁本收银台。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main_window.py" line="193"/>
        <source>Lock  (F2)</source>
        <translation>锁定  (F2)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="189"/>
        <source>Cashier terminal</source>
        <translation>收银终端</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="190"/>
        <source>Member card payments</source>
        <translation>会员卡收款</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="191"/>
        <source>Close shift…  (F8)</source>
        <translation>交班…  (F8)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="192"/>
        <source>Sign out</source>
        <translation>退出登录</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="194"/>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="207"/>
        <source>Terminal %1</source>
        <translation>终端 %1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="210"/>
        <source>Cashier %1</source>
        <translation>收银员 %1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="211"/>
        <source>Shift %1 · %2</source>
        <translation>第 %1 班 · %2</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="214"/>
        <source>Nobody signed in</source>
        <translation>未登录</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="217"/>
        <source>Being checked: %1</source>
        <translation>核实中：%1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="264"/>
        <source>Wait for the current operation to finish.</source>
        <translation>请等待当前操作完成。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="324"/>
        <source>Resolved after a restart:</source>
        <translation>重启后已核实：</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="428"/>
        <source>The terminal settings need a supervisor.</source>
        <translation>修改终端设置需要主管批准。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="457"/>
        <location filename="../main_window.py" line="478"/>
        <source>The shift cannot close yet: %1 operation(s) are still being checked.</source>
        <translation>暂不能交班：还有 %1 笔交易正在核实。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="222"/>
        <source>Old operations: %1 — supervisor</source>
        <translation>旧操作：%1 — 需主管处理</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="228"/>
        <source>Central server memory %1 % full: tell a supervisor (at 100 % charges are refused)</source>
        <translation>中央服务器内存已用 %1 %：请通知主管（达到 100 % 时将拒绝收款）</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="338"/>
        <source>%1 operation(s) got no answer and are too old to send again safely: a supervisor must decide (Old operations… in the status bar).</source>
        <translation>有 %1 笔操作未得到答复，且已过久，无法安全重发：须由主管决定（状态栏中的“旧操作…”）。</translation>
    </message>
</context>
<context>
    <name>MemberActionDialog</name>
    <message>
        <location filename="../members.py" line="243"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../members.py" line="244"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../members.py" line="245"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../members.py" line="261"/>
        <source>A supervisor cannot approve this at their own till: ask another supervisor.</source>
        <translation>主管不能在自己登录的收银台上批准此操作：请另一位主管批准。</translation>
    </message>
</context>
<context>
    <name>MemberCodeEnrolDialog</name>
    <message>
        <location filename="../member_security.py" line="197"/>
        <source>Member code</source>
        <translation>会员码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="198"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="198"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="199"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="201"/>
        <source>Reset the member&apos;s payment PIN</source>
        <translation>重置会员支付密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="202"/>
        <source>Member %1: a supervisor removes the member&apos;s payment PIN and lifts the lock after wrong PINs or codes; the member then sets a new PIN.</source>
        <translation>会员 %1：由主管清除会员的支付密码并解除因输错密码或会员码造成的锁定；之后由会员设置新密码。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="205"/>
        <source>Reset PIN</source>
        <translation>重置密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="208"/>
        <source>Member %1: ask the member to scan this QR code with their authenticator app now. It is shown this once.</source>
        <translation>会员 %1：请会员现在用身份验证器应用扫描此二维码。此码仅显示这一次。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="210"/>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="212"/>
        <source>Member %1: a supervisor enrols the member&apos;s dynamic member code (会员码). Enrolling again replaces an earlier one.</source>
        <translation>会员 %1：由主管为会员开通动态会员码。重新开通会替换之前的会员码。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="214"/>
        <source>Enrol</source>
        <translation>开通</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="225"/>
        <source>A supervisor&apos;s id and PIN are needed.</source>
        <translation>需要主管工号和密码。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="229"/>
        <source>Another supervisor must approve this.</source>
        <translation>须由另一位主管批准。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="233"/>
        <source>Checking the supervisor PIN…</source>
        <translation>正在核对主管密码…</translation>
    </message>
</context>
<context>
    <name>MemberPickDialog</name>
    <message>
        <location filename="../members.py" line="58"/>
        <source>(its card)</source>
        <translation>（其卡号）</translation>
    </message>
    <message>
        <location filename="../members.py" line="58"/>
        <source>(its account number)</source>
        <translation>（其账户号）</translation>
    </message>
    <message>
        <location filename="../members.py" line="60"/>
        <source>(its phone)</source>
        <translation>（其手机号）</translation>
    </message>
    <message>
        <location filename="../members.py" line="87"/>
        <source>“%2” is the card, account number or phone of %1 different members. Ask the customer which one they are, then pick (arrows and Enter, or tap).</source>
        <translation>“%2”是 %1 位不同会员的卡号、账户号或手机号。请询问顾客是哪一位，再选择（方向键加回车，或点击）。</translation>
    </message>
    <message>
        <location filename="../members.py" line="85"/>
        <source>Pick the member</source>
        <translation>选择会员</translation>
    </message>
    <message>
        <location filename="../members.py" line="53"/>
        <source>bonus {amount}</source>
        <translation>含赠送金 {amount}</translation>
    </message>
    <message>
        <location filename="../members.py" line="91"/>
        <source>%1 members match “%2”: pick the customer (arrows and Enter, or tap).</source>
        <translation>有 %1 位会员符合“%2”：请选择顾客（方向键加回车，或点击）。</translation>
    </message>
    <message>
        <location filename="../members.py" line="93"/>
        <source>This member</source>
        <translation>就是这位</translation>
    </message>
    <message>
        <location filename="../members.py" line="94"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../members.py" line="99"/>
        <source>Pick a member in the list.</source>
        <translation>请在列表中选择一位会员。</translation>
    </message>
</context>
<context>
    <name>MemberPinDialog</name>
    <message>
        <location filename="../member_confirm.py" line="68"/>
        <source>Member&apos;s confirmation</source>
        <translation>会员确认</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="70"/>
        <source>The member&apos;s payment PIN is locked after too many wrong entries. A supervisor can reset it (Member…  F7, Reset payment PIN). The charge is not made.</source>
        <translation>会员支付密码因多次输错已锁定。主管可以重置（会员…  F7，重置支付密码）。本次收款未完成。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="73"/>
        <source>Please ask the customer to enter their %1-digit payment PIN, or scan their member code, to confirm:</source>
        <translation>请顾客输入 %1 位支付密码，或扫描会员码，确认以下金额：</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="76"/>
        <source>Payment PIN</source>
        <translation>支付密码</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="77"/>
        <source>Confirm</source>
        <translation>确认</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="78"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="78"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="92"/>
        <source>The payment PIN is %1 digits.</source>
        <translation>支付密码为 %1 位数字。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="103"/>
        <source>Wrong PIN: %1 tries left before a lock.</source>
        <translation>支付密码错误（还可尝试 %1 次，之后将锁定）。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="106"/>
        <source>Wrong member code: %1 tries left before a lock.</source>
        <translation>会员码错误（还可尝试 %1 次，之后将锁定）。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="109"/>
        <source>This member code was used already: ask the customer to show the next one.</source>
        <translation>此会员码已使用过：请顾客出示下一个会员码。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="111"/>
        <source>This member code has expired: ask the customer to show the current one.</source>
        <translation>此会员码已过期：请顾客出示当前的会员码。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="113"/>
        <source>This member has no member code: ask for the payment PIN.</source>
        <translation>该会员未开通会员码：请输入支付密码。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="114"/>
        <source>This member has no payment PIN: scan their member code.</source>
        <translation>该会员未设置支付密码：请扫描会员码。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="115"/>
        <source>This member code is another member&apos;s.</source>
        <translation>此会员码属于其他会员。</translation>
    </message>
    <message>
        <location filename="../member_confirm.py" line="117"/>
        <source>Not confirmed: ask the customer again.</source>
        <translation>未能确认：请顾客重试。</translation>
    </message>
</context>
<context>
    <name>MemberPinSetDialog</name>
    <message>
        <location filename="../member_security.py" line="120"/>
        <source>Member&apos;s payment PIN</source>
        <translation>会员支付密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="121"/>
        <source>Member %1: please ask the member to enter a new %2-digit payment PIN twice (and their current PIN if they have one).</source>
        <translation>会员 %1：请会员输入两次新的 %2 位支付密码（已设置过的，请先输入当前密码）。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="124"/>
        <source>Current PIN (if set)</source>
        <translation>当前密码（如已设置）</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="125"/>
        <source>New PIN</source>
        <translation>新密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="126"/>
        <source>New PIN again</source>
        <translation>再次输入新密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="127"/>
        <source>Set PIN</source>
        <translation>设置密码</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="128"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="143"/>
        <source>The payment PIN is %1 digits.</source>
        <translation>支付密码为 %1 位数字。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="147"/>
        <source>The two entries of the new PIN differ.</source>
        <translation>两次输入的新密码不一致。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="152"/>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
</context>
<context>
    <name>MemberProfileDialog</name>
    <message>
        <location filename="../member_profile.py" line="65"/>
        <source>Member profile</source>
        <translation>会员资料</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="66"/>
        <source>Balance</source>
        <translation>余额</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="67"/>
        <source>Phone</source>
        <translation>手机</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="68"/>
        <source>Cards</source>
        <translation>卡</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="69"/>
        <source>Top-ups (recent)</source>
        <translation>充值（近期）</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="70"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="72"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="72"/>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="72"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="72"/>
        <source>Refunded</source>
        <translation>已退款</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="72"/>
        <source>Balance after</source>
        <translation>交易后余额</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="73"/>
        <source>Terminal</source>
        <translation>终端</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="73"/>
        <source>Receipt number</source>
        <translation>小票号</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="82"/>
        <source>No account %1 on the central server.</source>
        <translation>中心服务器上没有账户 %1。</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="84"/>
        <source>The profile was refused: %1</source>
        <translation>资料被拒绝：%1</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="86"/>
        <source>The profile could not be read (no connection to the central server): close this and try again.</source>
        <translation>无法读取资料（未连接中心服务器）：请关闭后重试。</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="93"/>
        <source>Reading the member&apos;s profile…</source>
        <translation>正在读取会员资料…</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="99"/>
        <source>%1 (principal %2, bonus %3)</source>
        <translation>%1（本金 %2，赠送 %3）</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="101"/>
        <location filename="../member_profile.py" line="112"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="105"/>
        <source>%1: blocked (%2)</source>
        <translation>%1：已停用（%2）</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="108"/>
        <source>%1: active</source>
        <translation>%1：正常</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="109"/>
        <source>none (the account id is used as its card)</source>
        <translation>无（以账户号作卡）</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="111"/>
        <source>%1: %2 top-up(s), %3</source>
        <translation>%1：%2 笔充值，%3</translation>
    </message>
    <message>
        <location filename="../member_profile.py" line="117"/>
        <source>No recent operations of this account on the central server.</source>
        <translation>中心服务器上没有此账户的近期操作。</translation>
    </message>
</context>
<context>
    <name>MemberSecurity</name>
    <message>
        <location filename="../member_security.py" line="67"/>
        <source>The member has a payment PIN: enter the current one first.</source>
        <translation>该会员已设置支付密码：请先输入当前密码。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="69"/>
        <source>Wrong PIN: %1 tries left before a lock.</source>
        <translation>支付密码错误（还可尝试 %1 次，之后将锁定）。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="72"/>
        <source>The member&apos;s payment PIN is locked: a supervisor must reset it first.</source>
        <translation>会员支付密码已锁定：须先由主管重置。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="75"/>
        <source>No such member.</source>
        <translation>没有该会员。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="78"/>
        <source>The two entries of the new PIN differ.</source>
        <translation>两次输入的新密码不一致。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="79"/>
        <source>Not accepted (%1).</source>
        <translation>未被接受（%1）。</translation>
    </message>
    <message>
        <location filename="../member_security.py" line="80"/>
        <source>The central server did not answer: try again.</source>
        <translation>中心服务器未响应：请重试。</translation>
    </message>
</context>
<context>
    <name>MembersDialog</name>
    <message>
        <location filename="../members.py" line="182"/>
        <source>Member</source>
        <translation>会员</translation>
    </message>
    <message>
        <location filename="../members.py" line="184"/>
        <source>Account on screen: %1</source>
        <translation>当前账户：%1</translation>
    </message>
    <message>
        <location filename="../members.py" line="185"/>
        <source>No account on screen: look a member up first to change a card or close an account.</source>
        <translation>当前没有账户：换卡或退卡前请先查找会员。</translation>
    </message>
    <message>
        <location filename="../members.py" line="187"/>
        <source>Member profile…</source>
        <translation>会员资料…</translation>
    </message>
    <message>
        <location filename="../members.py" line="188"/>
        <source>New member and card…</source>
        <translation>新会员开卡…</translation>
    </message>
    <message>
        <location filename="../members.py" line="189"/>
        <source>Lost card / new card…</source>
        <translation>挂失 / 补卡…</translation>
    </message>
    <message>
        <location filename="../members.py" line="190"/>
        <source>Close account (退卡)…</source>
        <translation>退卡销户…</translation>
    </message>
    <message>
        <location filename="../members.py" line="191"/>
        <source>Payment PIN (支付密码)…</source>
        <translation>支付密码…</translation>
    </message>
    <message>
        <location filename="../members.py" line="192"/>
        <source>Member code (会员码) QR…  (supervisor)</source>
        <translation>会员码二维码…（需主管）</translation>
    </message>
    <message>
        <location filename="../members.py" line="193"/>
        <source>Reset payment PIN / unlock…  (supervisor)</source>
        <translation>重置支付密码 / 解锁…（需主管）</translation>
    </message>
    <message>
        <location filename="../members.py" line="194"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>NewMemberDialog</name>
    <message>
        <location filename="../members.py" line="306"/>
        <source>New member</source>
        <translation>新会员</translation>
    </message>
    <message>
        <location filename="../members.py" line="307"/>
        <source>A new member account %1. The card is optional (it can be issued later).</source>
        <translation>新会员账户 %1。卡片可选（也可以以后再发）。</translation>
    </message>
    <message>
        <location filename="../members.py" line="309"/>
        <source>Opening an account needs a supervisor.</source>
        <translation>开户需要主管批准。</translation>
    </message>
    <message>
        <location filename="../members.py" line="311"/>
        <source>Name</source>
        <translation>姓名</translation>
    </message>
    <message>
        <location filename="../members.py" line="312"/>
        <source>Phone</source>
        <translation>手机号</translation>
    </message>
    <message>
        <location filename="../members.py" line="313"/>
        <source>Card (scan it)</source>
        <translation>卡号（请刷卡）</translation>
    </message>
    <message>
        <location filename="../members.py" line="314"/>
        <source>Open account</source>
        <translation>开户</translation>
    </message>
    <message>
        <location filename="../members.py" line="320"/>
        <source>Name: at most 64 characters, no control characters</source>
        <translation>姓名：最多 64 个字符，不能含控制字符</translation>
    </message>
    <message>
        <location filename="../members.py" line="323"/>
        <source>Name: enter the member&apos;s name</source>
        <translation>姓名：请输入会员姓名</translation>
    </message>
    <message>
        <location filename="../members.py" line="328"/>
        <source>Phone: 5 to 20 digits (an optional leading +)</source>
        <translation>手机号：5 到 20 位数字（可带前导 +）</translation>
    </message>
    <message>
        <location filename="../members.py" line="330"/>
        <source>Card</source>
        <translation>卡号</translation>
    </message>
</context>
<context>
    <name>OutcomeDialog</name>
    <message>
        <location filename="../members.py" line="133"/>
        <source>OK</source>
        <translation>确定</translation>
    </message>
</context>
<context>
    <name>PrinterSettingsDialog</name>
    <message>
        <location filename="../receipts/printer_settings.py" line="88"/>
        <source>Receipts and customer display</source>
        <translation>小票与顾客显示屏</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="90"/>
        <source>Shop name</source>
        <translation>店名</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="90"/>
        <source>Shop address</source>
        <translation>店铺地址</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="90"/>
        <source>Printer connection</source>
        <translation>打印机连接方式</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="91"/>
        <location filename="../receipts/printer_settings.py" line="123"/>
        <source>Printer address</source>
        <translation>打印机地址</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="91"/>
        <source>Paper width</source>
        <translation>纸宽</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="91"/>
        <location filename="../receipts/printer_settings.py" line="123"/>
        <source>Printer encoding</source>
        <translation>打印机编码</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="92"/>
        <source>Receipt number as</source>
        <translation>小票号打印为</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="92"/>
        <source>Print after every sale</source>
        <translation>每笔交易后自动打印</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="92"/>
        <source>Cut the paper</source>
        <translation>自动切纸</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="93"/>
        <source>Open the cash drawer after a cash top-up</source>
        <translation>现金充值后打开钱箱</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="93"/>
        <source>Customer display</source>
        <translation>顾客显示屏</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="94"/>
        <source>Customer display screen (0 = main)</source>
        <translation>顾客显示屏所在屏幕（0 = 主屏）</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="94"/>
        <source>Customer display language</source>
        <translation>顾客显示屏语言</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="103"/>
        <source>e.g. 192.168.1.50, 0x0416:0x5011, /dev/ttyUSB0, COM3</source>
        <translation>例如 192.168.1.50、0x0416:0x5011、/dev/ttyUSB0、COM3</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="104"/>
        <source>Test print</source>
        <translation>测试打印</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="105"/>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="106"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="124"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="138"/>
        <source>Printing a test slip…</source>
        <translation>正在打印测试小票…</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="145"/>
        <source>The test slip was sent to the printer.</source>
        <translation>测试小票已发送到打印机。</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="149"/>
        <source>The test slip did not print (%1): %2</source>
        <translation>测试小票未打印（%1）：%2</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="96"/>
        <source>No printer</source>
        <translation>不使用打印机</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="96"/>
        <source>USB</source>
        <translation>USB</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="96"/>
        <source>Network (TCP)</source>
        <translation>网络（TCP）</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="97"/>
        <source>Serial port</source>
        <translation>串口</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="97"/>
        <source>CUPS printer queue</source>
        <translation>CUPS 打印队列</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="98"/>
        <source>lp print queue</source>
        <translation>lp 打印队列</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="98"/>
        <source>Windows printer</source>
        <translation>Windows 打印机</translation>
    </message>
    <message>
        <location filename="../receipts/printer_settings.py" line="99"/>
        <source>Device file (e.g. /dev/usb/lp0)</source>
        <translation>设备文件（如 /dev/usb/lp0）</translation>
    </message>
</context>
<context>
    <name>ReceiptBar</name>
    <message>
        <location filename="../receipts/widgets.py" line="55"/>
        <source>Earlier sale…  (F3)</source>
        <translation>历史交易…  (F3)</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="56"/>
        <source>Printer…</source>
        <translation>打印机…</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="62"/>
        <source>no printer set up</source>
        <translation>未设置打印机</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="62"/>
        <source>No receipt printer is set up (Printer…).</source>
        <translation>未设置小票打印机（请点“打印机…”）。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="63"/>
        <source>printer offline</source>
        <translation>打印机未连接</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="64"/>
        <source>The printer is off, unplugged or not answering. Check it, then reprint.</source>
        <translation>打印机未开机、未连接或无响应。请检查后重打。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="65"/>
        <source>out of paper</source>
        <translation>打印机缺纸</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="65"/>
        <source>The printer is out of paper. Load a roll, then reprint.</source>
        <translation>打印机缺纸。请装纸后重打。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="66"/>
        <source>printer not answering</source>
        <translation>打印机无响应</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="67"/>
        <source>The printer did not answer in time. Check it, then reprint.</source>
        <translation>打印机响应超时。请检查后重打。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="68"/>
        <source>printer type not available</source>
        <translation>不支持此打印机类型</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="69"/>
        <source>This kind of printer connection is not available on this computer.</source>
        <translation>本机不支持这种打印机连接方式。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="70"/>
        <source>printer error</source>
        <translation>打印机错误</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="70"/>
        <source>The printer reported an error. Check it, then reprint.</source>
        <translation>打印机报告错误。请检查后重打。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="75"/>
        <source>Reprint receipt  (F4)</source>
        <translation>重打小票  (F4)</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="75"/>
        <source>Show receipt  (F4)</source>
        <translation>查看小票  (F4)</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="79"/>
        <source>Receipt reprinted.</source>
        <translation>小票已重打。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="79"/>
        <source>Receipt printed.</source>
        <translation>小票已打印。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="82"/>
        <source>Receipt not printed: %1</source>
        <translation>小票未打印：%1</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="83"/>
        <source>The sale itself is done.</source>
        <translation>交易本身已完成。</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="86"/>
        <source>Printing the receipt…</source>
        <translation>正在打印小票…</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="124"/>
        <source>Receipt %1</source>
        <translation>小票 %1</translation>
    </message>
    <message>
        <location filename="../receipts/widgets.py" line="129"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../receipts/hooks.py" line="126"/>
        <source>The receipt and printer settings need a supervisor.</source>
        <translation>小票和打印机设置需要主管审批。</translation>
    </message>
</context>
<context>
    <name>RefundDialog</name>
    <message>
        <location filename="../dialogs.py" line="91"/>
        <location filename="../dialogs.py" line="107"/>
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="93"/>
        <source>Refund of the charge of %1 to account %2. At most %3 can still be refunded.</source>
        <translation>退还账户 %2 的收款 %1。最多还可退 %3。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="98"/>
        <source>card</source>
        <translation>储值卡</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="102"/>
        <source>Refund of a card + other payment of account %1. Left to refund: %2. Each part goes back where it came from (the card to the card, cash as cash), in proportion.</source>
        <translation>账户 %1 的组合支付退款。可退：%2。各部分按比例原路退回（储值卡退回储值卡，现金退现金）。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="105"/>
        <source>Amount to refund</source>
        <translation>退款金额</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="106"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="106"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="108"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="118"/>
        <source>Amount: at most %1 can be refunded</source>
        <translation>金额：最多可退 %1</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="125"/>
        <source>A supervisor cannot approve their own refund: ask another supervisor.</source>
        <translation>主管不能批准自己的退款：请另一位主管批准。</translation>
    </message>
</context>
<context>
    <name>SalePage</name>
    <message>
        <location filename="../sale_lookup.py" line="153"/>
        <source>“%1” is the card, account number or phone of %2 members: ask the customer which one they are</source>
        <translation>“%1”是 %2 位会员的卡号、账户号或手机号：请询问顾客是哪一位</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="83"/>
        <source>Account (scan the card or type)</source>
        <translation>账户（刷卡或输入）</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="85"/>
        <source>Look up</source>
        <translation>查询</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="210"/>
        <location filename="../sale_layout.py" line="87"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="89"/>
        <source>Charge  (F12)</source>
        <translation>收款  (F12)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="90"/>
        <source>Hold  (F9)</source>
        <translation>预授权  (F9)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="92"/>
        <source>+ Cash  (F1)</source>
        <translation>+现金  (F1)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="96"/>
        <source>Complete sale…</source>
        <translation>完成交易…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="302"/>
        <location filename="../sale_layout.py" line="97"/>
        <source>Release hold</source>
        <translation>撤销预授权</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="99"/>
        <source>This shift</source>
        <translation>本班交易</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="98"/>
        <source>Next customer  (Esc)</source>
        <translation>下一位顾客  (Esc)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="84"/>
        <source>Card, phone or name</source>
        <translation>卡号、手机号或姓名</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="86"/>
        <source>Member…  (F7)</source>
        <translation>会员…  (F7)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="93"/>
        <source>The card pays part of the bill, the rest in cash</source>
        <translation>储值卡付一部分，其余现金支付</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="94"/>
        <source>The card pays part of the bill, the rest by WeChat Pay</source>
        <translation>储值卡付一部分，其余微信支付</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="95"/>
        <source>+ WeChat  (Ins)</source>
        <translation>+微信  (插入键)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="100"/>
        <source>Refund…  (F5)</source>
        <translation>退款…  (F5)</translation>
    </message>
    <message>
        <location filename="../sale_layout.py" line="101"/>
        <source>Top up…  (F6)</source>
        <translation>充值…  (F6)</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="209"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="209"/>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="210"/>
        <location filename="../sale.py" line="208"/>
        <location filename="../sale_lookup.py" line="113"/>
        <location filename="../sale_texts.py" line="55"/>
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="211"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="211"/>
        <source>Balance after</source>
        <translation>交易后余额</translation>
    </message>
    <message>
        <location filename="../history_model.py" line="212"/>
        <source>Cashier</source>
        <translation>收银员</translation>
    </message>
    <message>
        <location filename="../sale_lookup.py" line="123"/>
        <location filename="../sale_lookup.py" line="201"/>
        <source>Looking up %1…</source>
        <translation>正在查询 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="56"/>
        <source>Account: cannot look up now (no connection to the central server)</source>
        <translation>账户：暂时无法查询（与中心服务器断开）</translation>
    </message>
    <message>
        <location filename="../sale_lookup.py" line="263"/>
        <source>Scan a card to start</source>
        <translation>请刷卡开始</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="31"/>
        <source>Account %1 · %2</source>
        <translation>账户 %1 · %2</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="36"/>
        <source>Balance %1 · On hold %2 · Available %3</source>
        <translation>余额 %1 · 预授权占用 %2 · 可用 %3</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="39"/>
        <location filename="../sale_texts.py" line="85"/>
        <source>Balance %1</source>
        <translation>余额 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="41"/>
        <source>principal %1 + bonus %2</source>
        <translation>本金 %1 + 赠送 %2</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="115"/>
        <source>Nothing was paid: the customer still owes %1.</source>
        <translation>未支付任何款项：顾客仍需支付 %1。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="116"/>
        <source>Paid %1: card %2 + %3</source>
        <translation>已付 %1：储值卡 %2 + %3</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="119"/>
        <source>Change %1</source>
        <translation>找零 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="125"/>
        <source>Part of it may have been given back: see what is left of the sale (Earlier sale…, F3) before refunding again.</source>
        <translation>可能已退回一部分：再次退款前请查看该笔消费的剩余可退金额（历史交易…，F3）。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="127"/>
        <source>card %1</source>
        <translation>储值卡 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="130"/>
        <source>Refunded: %1 (%2)</source>
        <translation>已退款：%1（%2）</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="149"/>
        <source>Large amount: %1
%2
Is this amount right?</source>
        <translation>大额：%1
%2
金额正确吗？</translation>
    </message>
    <message>
        <location filename="../sale.py" line="269"/>
        <source>Yes, this amount</source>
        <translation>是，金额正确</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="143"/>
        <source>No open hold</source>
        <translation>没有未完成的预授权</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="144"/>
        <source>Open hold: %2 until %3
Account %1</source>
        <translation>预授权：%2，有效至 %3
账户 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="154"/>
        <source>Release the hold of %1 on account %2? The money goes back to the account.</source>
        <translation>释放账户 %2 上 %1 的预授权？这笔钱将退回账户。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="61"/>
        <source>Charging %1 to %2…</source>
        <translation>正在向 %2 收款 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="61"/>
        <source>Refunding %1 to %2…</source>
        <translation>正在向 %2 退款 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="62"/>
        <source>Topping up %1 to %2…</source>
        <translation>正在为 %2 充值 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="62"/>
        <source>Holding %1 on %2…</source>
        <translation>正在为 %2 预授权 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="63"/>
        <source>Completing the sale: %1 from %2…</source>
        <translation>正在完成交易：从 %2 收取 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="64"/>
        <source>Releasing the hold of %1 on %2…</source>
        <translation>正在撤销 %2 的预授权 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="65"/>
        <source>Opening member account %2…</source>
        <translation>正在开立会员账户 %2…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="66"/>
        <source>Changing the card of %2…</source>
        <translation>正在为 %2 换卡…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="67"/>
        <source>Closing account %2…</source>
        <translation>正在为账户 %2 退卡…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="68"/>
        <source>Charging %1 to the card of %2, the rest by another payment…</source>
        <translation>正在从 %2 的储值卡收款 %1，其余用其他方式支付…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="69"/>
        <source>Refunding %1 of a card + other payment to %2…</source>
        <translation>正在向 %2 退还组合支付 %1…</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="81"/>
        <source>Held: %1 until %2</source>
        <translation>已预授权：%1，有效至 %2</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="82"/>
        <source>Available now %1</source>
        <translation>当前可用 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="84"/>
        <source>Hold released: %1</source>
        <translation>已撤销预授权：%1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="89"/>
        <source>Topped up: %1 (%2)</source>
        <translation>充值成功：%1（%2）</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="89"/>
        <source>Topped up: %1 (%2) + bonus %3</source>
        <translation>充值成功：%1（%2）+ 赠送 %3</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="94"/>
        <source>Sale completed: %1 charged, %2 released</source>
        <translation>交易完成：已收款 %1，退回 %2</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="96"/>
        <source>Approved: %1 charged</source>
        <translation>成功：已收款 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="96"/>
        <source>Refunded: %1</source>
        <translation>已退款：%1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="97"/>
        <source>Sale completed: %1 charged</source>
        <translation>交易完成：已收款 %1</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="179"/>
        <source>Charged OFFLINE: %1 to %2. Receipt marked OFFLINE; the card is charged when the central server is back.</source>
        <translation>已离线收款：%2 收款 %1。小票标有“离线”；中心服务器恢复后从卡内收款。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="92"/>
        <location filename="../sale_texts.py" line="99"/>
        <location filename="../sale_texts.py" line="120"/>
        <location filename="../sale_texts.py" line="131"/>
        <source>New balance %1</source>
        <translation>新余额 %1</translation>
    </message>
    <message>
        <location filename="../sale_lookup.py" line="157"/>
        <source>%1 members found: pick one</source>
        <translation>找到 %1 位会员：请选择</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="49"/>
        <source>Card %1 is blocked (reported %2): it cannot be used. Find the member by phone or name, then give them a new card (Member…).</source>
        <translation>卡 %1 已停用（%2）：不能使用。请按手机号或姓名查找会员，再补发新卡（会员…）。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="53"/>
        <source>Account: unknown account %1 (no card, phone or name matches)</source>
        <translation>账户：未知账户 %1（没有匹配的卡号、手机号或姓名）</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="136"/>
        <source>Checked: %1 %2 for %3: %4</source>
        <translation>已核实：%3 的%1 %2：%4</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="159"/>
        <source>Being checked: the central server has not answered yet.
Do NOT charge again. The terminal keeps trying on its own.</source>
        <translation>核实中：中心服务器尚未答复。
请勿重复收款，终端会自动重试。</translation>
    </message>
    <message>
        <location filename="../sale_panel.py" line="62"/>
        <source>Connected again: charges can be made.</source>
        <translation>已重新连接：可以收款了。</translation>
    </message>
    <message>
        <location filename="../sale_texts.py" line="164"/>
        <source>Refund: select an approved charge in the list first (Tab to the list, arrow keys to choose).</source>
        <translation>退款：请先在列表中选择一笔成功的收款（按 Tab 进入列表，用方向键选择）。</translation>
    </message>
    <message>
        <location filename="../sale_lookup.py" line="265"/>
        <source>Press Enter to look up %1</source>
        <translation>按回车键查询 %1</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../settings.py" line="288"/>
        <source>Lock when idle (minutes, 0 = never)</source>
        <translation>空闲自动锁定（分钟，0 = 不锁定）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="277"/>
        <source>Terminal settings</source>
        <translation>终端设置</translation>
    </message>
    <message>
        <location filename="../settings.py" line="281"/>
        <location filename="../settings.py" line="374"/>
        <source>Terminal id</source>
        <translation>终端编号</translation>
    </message>
    <message>
        <location filename="../settings.py" line="278"/>
        <source>This terminal needs a name, the address of the shop&apos;s ledger gateway and the credential `cashierctl terminal enroll` printed for it. They are tested before they are saved.</source>
        <translation>本终端需要一个名称、门店账本网关的地址，以及 `cashierctl terminal enroll` 为它打印的凭据。保存前会先测试。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="282"/>
        <source>Ledger gateway address(es)</source>
        <translation>账本网关地址</translation>
    </message>
    <message>
        <location filename="../settings.py" line="283"/>
        <source>Terminal credential</source>
        <translation>终端凭据</translation>
    </message>
    <message>
        <location filename="../settings.py" line="284"/>
        <source>(unchanged)</source>
        <translation>（不变）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="285"/>
        <source>Shop CA certificate (file)</source>
        <translation>门店 CA 证书（文件）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="286"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../settings.py" line="287"/>
        <source>A hold lasts (minutes)</source>
        <translation>预授权有效期（分钟）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="289"/>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <location filename="../settings.py" line="290"/>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <location filename="../settings.py" line="291"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../settings.py" line="295"/>
        <source>Same as the computer</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../settings.py" line="322"/>
        <location filename="../settings.py" line="362"/>
        <source>Ledger gateway address: %1</source>
        <translation>账本网关地址：%1</translation>
    </message>
    <message>
        <location filename="../settings.py" line="325"/>
        <source>Terminal credential: must not be empty (`cashierctl terminal enroll` prints it)</source>
        <translation>终端凭据：不能为空（由 `cashierctl terminal enroll` 打印）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="359"/>
        <source>The gateway refused this credential (unknown or revoked): enrol the terminal again with `cashierctl terminal enroll`.</source>
        <translation>网关拒绝了此凭据（未知或已吊销）：请用 `cashierctl terminal enroll` 重新登记本终端。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="364"/>
        <source>Shop CA certificate: cannot be read (%1)</source>
        <translation>门店 CA 证书：无法读取（%1）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="332"/>
        <source>Testing the connection…</source>
        <translation>正在测试连接…</translation>
    </message>
    <message>
        <location filename="../settings.py" line="338"/>
        <source>must not be empty</source>
        <translation>不能为空</translation>
    </message>
    <message>
        <location filename="../settings.py" line="339"/>
        <source>each address starts with https:// (http:// only on this PC)</source>
        <translation>每个地址以 https:// 开头（http:// 仅限本机）</translation>
    </message>
    <message>
        <location filename="../settings.py" line="345"/>
        <source>Connected: the central server answers.</source>
        <translation>已连接：中心服务器有响应。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="347"/>
        <source>Connected, but the server holds no ledger yet: run `cashierctl init` there first.</source>
        <translation>已连接，但服务器上还没有账本：请先在服务器上运行 `cashierctl init`。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="367"/>
        <source>Could not connect: %1</source>
        <translation>无法连接：%1</translation>
    </message>
    <message>
        <location filename="../settings.py" line="379"/>
        <source>Test the connection before saving.</source>
        <translation>请先测试连接再保存。</translation>
    </message>
</context>
<context>
    <name>ShiftReportDialog</name>
    <message>
        <location filename="../report.py" line="332"/>
        <source>%1, approved by %2</source>
        <translation>%1（%2 批准）</translation>
    </message>
    <message>
        <location filename="../report.py" line="360"/>
        <source>Holds still open</source>
        <translation>仍未结束的预授权</translation>
    </message>
    <message>
        <location filename="../report.py" line="428"/>
        <location filename="../report.py" line="444"/>
        <source>Shift report</source>
        <translation>交班报表</translation>
    </message>
    <message>
        <location filename="../report.py" line="429"/>
        <source>Print…</source>
        <translation>打印…</translation>
    </message>
    <message>
        <location filename="../report.py" line="431"/>
        <source>Save as PDF…</source>
        <translation>保存为 PDF…</translation>
    </message>
    <message>
        <location filename="../report.py" line="432"/>
        <source>Save as CSV…</source>
        <translation>保存为 CSV…</translation>
    </message>
    <message>
        <location filename="../report.py" line="433"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../report.py" line="440"/>
        <location filename="../report.py" line="474"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../report.py" line="440"/>
        <source>Count</source>
        <translation>笔数</translation>
    </message>
    <message>
        <location filename="../report.py" line="440"/>
        <location filename="../report.py" line="474"/>
        <source>Sum</source>
        <translation>金额合计</translation>
    </message>
    <message>
        <location filename="../report.py" line="351"/>
        <location filename="../report.py" line="441"/>
        <source>All cashiers</source>
        <translation>全部收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="357"/>
        <location filename="../report.py" line="441"/>
        <source>Declined</source>
        <translation>被拒绝</translation>
    </message>
    <message>
        <location filename="../report.py" line="442"/>
        <source>By cashier</source>
        <translation>按收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="362"/>
        <location filename="../report.py" line="442"/>
        <source>Net (charges and completed sales minus refunds)</source>
        <translation>净额（收款与完成交易减退款）</translation>
    </message>
    <message>
        <location filename="../report.py" line="251"/>
        <location filename="../report.py" line="365"/>
        <source>Top-ups by %1</source>
        <translation>充值（%1）</translation>
    </message>
    <message>
        <location filename="../report.py" line="253"/>
        <location filename="../report.py" line="367"/>
        <source>Bonus granted</source>
        <translation>赠送金额</translation>
    </message>
    <message>
        <location filename="../report.py" line="254"/>
        <location filename="../report.py" line="368"/>
        <source>Spent from principal</source>
        <translation>消费：本金</translation>
    </message>
    <message>
        <location filename="../report.py" line="255"/>
        <location filename="../report.py" line="369"/>
        <source>Spent from bonus</source>
        <translation>消费：赠送</translation>
    </message>
    <message>
        <location filename="../report.py" line="257"/>
        <source>Refunded to principal · to bonus</source>
        <translation>退款：退回本金 · 退回赠送</translation>
    </message>
    <message>
        <location filename="../report.py" line="260"/>
        <source>Accounts closed: cash paid out</source>
        <translation>退卡：退还现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="262"/>
        <location filename="../report.py" line="372"/>
        <source>Bonus forfeited</source>
        <translation>赠送金额作废</translation>
    </message>
    <message>
        <location filename="../report.py" line="265"/>
        <source>Members opened · cards replaced</source>
        <translation>新开会员 · 补卡</translation>
    </message>
    <message>
        <location filename="../report.py" line="268"/>
        <source>Operations whose principal/bonus split is unknown</source>
        <translation>本金/赠送拆分未知的操作</translation>
    </message>
    <message>
        <location filename="../report.py" line="282"/>
        <source>Card + other payment: from the card</source>
        <translation>组合支付：储值卡部分</translation>
    </message>
    <message>
        <location filename="../report.py" line="288"/>
        <source>Refunded to the card (card + other payments)</source>
        <translation>退回储值卡（组合支付）</translation>
    </message>
    <message>
        <location filename="../report.py" line="299"/>
        <source>Over %1</source>
        <translation>长款 %1</translation>
    </message>
    <message>
        <location filename="../report.py" line="301"/>
        <source>Short %1</source>
        <translation>短款 %1</translation>
    </message>
    <message>
        <location filename="../report.py" line="302"/>
        <source>Even</source>
        <translation>相符</translation>
    </message>
    <message>
        <location filename="../report.py" line="309"/>
        <location filename="../report.py" line="381"/>
        <source>Opening float</source>
        <translation>备用金</translation>
    </message>
    <message>
        <location filename="../report.py" line="310"/>
        <source>(not entered)</source>
        <translation>（未录入）</translation>
    </message>
    <message>
        <location filename="../report.py" line="311"/>
        <source>Cash top-ups</source>
        <translation>现金充值</translation>
    </message>
    <message>
        <location filename="../report.py" line="312"/>
        <source>Cash paid out on card closes</source>
        <translation>销卡退还现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="313"/>
        <location filename="../report.py" line="382"/>
        <location filename="../report.py" line="477"/>
        <source>Cash in</source>
        <translation>存入现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="314"/>
        <location filename="../report.py" line="383"/>
        <location filename="../report.py" line="477"/>
        <source>Cash out</source>
        <translation>取出现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="316"/>
        <source>Cash of card + other payments (less change, less given back)</source>
        <translation>组合支付现金（扣除找零与已退）</translation>
    </message>
    <message>
        <location filename="../report.py" line="318"/>
        <location filename="../report.py" line="384"/>
        <source>Cash expected in the drawer</source>
        <translation>钱箱应有现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="320"/>
        <location filename="../report.py" line="387"/>
        <source>Counted</source>
        <translation>实点现金</translation>
    </message>
    <message>
        <location filename="../report.py" line="321"/>
        <location filename="../report.py" line="388"/>
        <source>Over / short</source>
        <translation>长短款</translation>
    </message>
    <message>
        <location filename="../report.py" line="370"/>
        <source>Refunded to principal</source>
        <translation>退回本金</translation>
    </message>
    <message>
        <location filename="../report.py" line="371"/>
        <source>Refunded to bonus</source>
        <translation>退回赠送</translation>
    </message>
    <message>
        <location filename="../report.py" line="283"/>
        <location filename="../report.py" line="373"/>
        <source>Card + other payment: by %1</source>
        <translation>组合支付：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="286"/>
        <location filename="../report.py" line="376"/>
        <source>Change handed back</source>
        <translation>找零</translation>
    </message>
    <message>
        <location filename="../report.py" line="290"/>
        <location filename="../report.py" line="378"/>
        <source>Given back by %1 (card + other payments)</source>
        <translation>组合支付退款：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="428"/>
        <location filename="../report.py" line="444"/>
        <source>X report (shift still open)</source>
        <translation>X 报表（班次未交班）</translation>
    </message>
    <message>
        <location filename="../report.py" line="430"/>
        <source>Print slip</source>
        <translation>打印小票</translation>
    </message>
    <message>
        <location filename="../report.py" line="443"/>
        <source>(reserved only)</source>
        <translation>（仅预授权，未收款）</translation>
    </message>
    <message>
        <location filename="../report.py" line="446"/>
        <source>Terminal %1, shift %2</source>
        <translation>终端 %1，第 %2 班</translation>
    </message>
    <message>
        <location filename="../report.py" line="448"/>
        <source>Opened %1 by %2</source>
        <translation>%1 由 %2 开班</translation>
    </message>
    <message>
        <location filename="../report.py" line="450"/>
        <source>As of %1: the shift is still open</source>
        <translation>截至 %1：本班次尚未交班</translation>
    </message>
    <message>
        <location filename="../report.py" line="452"/>
        <source>Closed %1 by %2</source>
        <translation>%1 由 %2 交班</translation>
    </message>
    <message>
        <location filename="../report.py" line="474"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../report.py" line="474"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../report.py" line="484"/>
        <source>Member cards</source>
        <translation>会员卡</translation>
    </message>
    <message>
        <location filename="../report.py" line="492"/>
        <source>%1 hold(s) of this shift still open (%2): complete or release them in the next shift.</source>
        <translation>本班次仍有 %1 笔预授权未完成（%2）：请在下一班次完成或撤销。</translation>
    </message>
    <message>
        <location filename="../report.py" line="496"/>
        <source>%1 operation(s) still being checked are not counted.</source>
        <translation>%1 笔正在核实的交易未计入。</translation>
    </message>
    <message>
        <location filename="../report.py" line="475"/>
        <location filename="../report.py" line="499"/>
        <source>Cashier</source>
        <translation>收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="535"/>
        <source>Sent to the printer.</source>
        <translation>已发送到打印机。</translation>
    </message>
    <message>
        <location filename="../report.py" line="539"/>
        <source>PDF files (*.pdf)</source>
        <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
        <location filename="../report.py" line="539"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../report.py" line="540"/>
        <source>Save the shift report</source>
        <translation>保存交班报表</translation>
    </message>
    <message>
        <location filename="../report.py" line="546"/>
        <source>Could not save: %1</source>
        <translation>无法保存：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="548"/>
        <source>Saved: %1</source>
        <translation>已保存：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="358"/>
        <location filename="../report.py" line="461"/>
        <source>Abandoned (too old to re-send)</source>
        <translation>已放弃（过久无法重发）</translation>
    </message>
</context>
<context>
    <name>SignInPage</name>
    <message>
        <location filename="../signin.py" line="61"/>
        <source>Sign in to start selling</source>
        <translation>登录后开始收银</translation>
    </message>
    <message>
        <location filename="../signin.py" line="62"/>
        <location filename="../signin.py" line="81"/>
        <source>Cashier id</source>
        <translation>收银员工号</translation>
    </message>
    <message>
        <location filename="../signin.py" line="63"/>
        <source>PIN</source>
        <translation>密码</translation>
    </message>
    <message>
        <location filename="../signin.py" line="64"/>
        <source>Scan your badge or type your id</source>
        <translation>刷工牌或输入工号</translation>
    </message>
    <message>
        <location filename="../signin.py" line="65"/>
        <source>4 to 12 digits</source>
        <translation>4 到 12 位数字</translation>
    </message>
    <message>
        <location filename="../signin.py" line="66"/>
        <source>Sign in</source>
        <translation>登录</translation>
    </message>
    <message>
        <location filename="../signin.py" line="93"/>
        <source>Checking…</source>
        <translation>正在核对…</translation>
    </message>
</context>
<context>
    <name>SplitTenderDialog</name>
    <message>
        <location filename="../split_tender.py" line="124"/>
        <source>Rest by %1: %2</source>
        <translation>其余 %1：%2</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="130"/>
        <source>Change %1</source>
        <translation>找零 %1</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="132"/>
        <source>Change —</source>
        <translation>找零 —</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="136"/>
        <source>Card + other payment</source>
        <translation>组合支付</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="137"/>
        <source>Bill %1 for account %2. The card has %3 available.</source>
        <translation>账户 %2 应付 %1。储值卡可用 %3。</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="143"/>
        <source>From the card</source>
        <translation>储值卡支付</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="144"/>
        <source>Cash handed over</source>
        <translation>实收现金</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="145"/>
        <source>Pay  (Enter)</source>
        <translation>支付  (Enter)</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="146"/>
        <source>Back  (Esc)</source>
        <translation>返回  (Esc)</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="158"/>
        <source>From the card: type an amount above zero (the card pays part of the bill)</source>
        <translation>储值卡支付：请输入大于零的金额（储值卡支付一部分）</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="162"/>
        <source>From the card: less than the bill %1 (the card alone: Charge, F12)</source>
        <translation>储值卡支付：须少于应付 %1（仅用储值卡请按收款 F12）</translation>
    </message>
    <message>
        <location filename="../split_tender.py" line="175"/>
        <source>Cash handed over: at least the rest, %1</source>
        <translation>实收现金：至少为其余金额 %1</translation>
    </message>
</context>
<context>
    <name>StaleOpsDialog</name>
    <message>
        <location filename="../stale_ops.py" line="41"/>
        <source>%1 d %2 h</source>
        <translation>%1 天 %2 小时</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="43"/>
        <source>%1 h</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="84"/>
        <source>Operations too old to re-send</source>
        <translation>过久无法重发的操作</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="87"/>
        <source>These operations got no answer from the central server and are now older than %1 h (the ledger remembers an operation for %2 h). Sending one again could charge the customer twice, so the terminal no longer sends them by itself. Re-check asks the central server whether it was done; if it cannot tell, check the account with the back office and mark the operation abandoned (the customer was not charged, or it is handled by hand).</source>
        <translation>这些操作未得到中央服务器的答复，现已超过 %1 小时（账本只记住一笔操作 %2 小时）。再次发送可能向顾客重复收款，因此终端不再自动发送。“重新核对”会询问中央服务器该操作是否已完成；如果无法确定，请与后台核对账户，并将该操作标记为放弃（未向顾客收款，或由人工处理）。</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="93"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="93"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="94"/>
        <source>Mark abandoned</source>
        <translation>标记为放弃</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="95"/>
        <source>Re-check</source>
        <translation>重新核对</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="96"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="104"/>
        <source>%1 %2, %3 (%4 ago)</source>
        <translation>%1 %2，%3（%4 前）</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="121"/>
        <source>No operation is waiting for a decision.</source>
        <translation>没有等待决定的操作。</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="130"/>
        <source>Select an operation in the list first.</source>
        <translation>请先在列表中选择一笔操作。</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="143"/>
        <source>That operation was already decided.</source>
        <translation>该操作已有决定。</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="145"/>
        <source>Marked abandoned by %1: %2</source>
        <translation>已由 %1 标记为放弃：%2</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="155"/>
        <source>Asking the central server…</source>
        <translation>正在询问中央服务器…</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="160"/>
        <source>The central server has its answer: %1</source>
        <translation>中央服务器已有答复：%1</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="165"/>
        <source>The central server has no record of it: it was not done while it could be remembered, or its record has expired. Check the account with the back office, then mark it abandoned.</source>
        <translation>中央服务器没有该操作的记录：它在可记住的期间内未完成，或其记录已过期。请与后台核对账户，然后将其标记为放弃。</translation>
    </message>
    <message>
        <location filename="../stale_ops.py" line="170"/>
        <source>The central server did not answer: try Re-check again later.</source>
        <translation>中央服务器未答复：请稍后再次“重新核对”。</translation>
    </message>
</context>
<context>
    <name>SupervisorDialog</name>
    <message>
        <location filename="../till_dialog.py" line="329"/>
        <source>Supervisor approval</source>
        <translation>主管批准</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="330"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="330"/>
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="331"/>
        <source>Approve</source>
        <translation>批准</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="332"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="336"/>
        <source>Another supervisor must approve this.</source>
        <translation>必须由另一位主管批准。</translation>
    </message>
</context>
<context>
    <name>Texts</name>
    <message>
        <location filename="../texts.py" line="19"/>
        <source>Declined: the card is blocked (reported lost or stolen); nothing was charged</source>
        <translation>已拒绝：此卡已停用（挂失或被盗），未收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="41"/>
        <source>Not made: that card number is another member&apos;s phone number</source>
        <translation>未完成：该卡号是另一位会员的手机号</translation>
    </message>
    <message>
        <location filename="../texts.py" line="42"/>
        <source>Declined: that card is not one of this account&apos;s cards</source>
        <translation>已拒绝：该卡不是此账户的卡</translation>
    </message>
    <message>
        <location filename="../texts.py" line="43"/>
        <source>Not made: that account number is already a card number or a member&apos;s phone</source>
        <translation>未完成：该账户号已是某张卡的卡号或某位会员的手机号</translation>
    </message>
    <message>
        <location filename="../texts.py" line="44"/>
        <source>Not made: that phone is already another member&apos;s phone, card number or account number</source>
        <translation>未完成：该手机号已是另一位会员的手机号、卡号或账户号</translation>
    </message>
    <message>
        <location filename="../texts.py" line="46"/>
        <source>Not made: the member&apos;s payment PIN or member code is needed for this amount</source>
        <translation>未完成：此金额需要会员的支付密码或会员码确认</translation>
    </message>
    <message>
        <location filename="../texts.py" line="84"/>
        <source>Card no. is a phone</source>
        <translation>卡号是手机号</translation>
    </message>
    <message>
        <location filename="../texts.py" line="85"/>
        <source>Not this account&apos;s card</source>
        <translation>非本账户的卡</translation>
    </message>
    <message>
        <location filename="../texts.py" line="86"/>
        <source>Number taken</source>
        <translation>号码已被占用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="87"/>
        <source>Phone taken</source>
        <translation>手机号已被占用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="21"/>
        <location filename="../texts.py" line="65"/>
        <source>Approved</source>
        <translation>成功</translation>
    </message>
    <message>
        <location filename="../texts.py" line="22"/>
        <source>Declined: not enough money on the account</source>
        <translation>被拒绝：账户余额不足</translation>
    </message>
    <message>
        <location filename="../texts.py" line="23"/>
        <source>Declined: unknown account</source>
        <translation>被拒绝：账户不存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="24"/>
        <source>Declined: the account is frozen</source>
        <translation>被拒绝：账户已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="25"/>
        <source>Refund refused: the original charge was not found</source>
        <translation>退款被拒绝：找不到原收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="26"/>
        <source>Refund refused: more than the charge left to refund</source>
        <translation>退款被拒绝：超过原收款可退金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="27"/>
        <source>Declined: the balance would pass its upper limit</source>
        <translation>被拒绝：余额将超过上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="28"/>
        <source>Declined: the account is not frozen</source>
        <translation>被拒绝：账户未冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="29"/>
        <source>Declined: the account already exists</source>
        <translation>被拒绝：账户已存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="30"/>
        <source>Declined: this account has too many open holds</source>
        <translation>被拒绝：此账户未完成的预授权过多</translation>
    </message>
    <message>
        <location filename="../texts.py" line="31"/>
        <source>Not completed: the hold was not found (it may be too old)</source>
        <translation>未完成：找不到此预授权（可能已过久）</translation>
    </message>
    <message>
        <location filename="../texts.py" line="32"/>
        <source>Not completed: this hold was already completed</source>
        <translation>未完成：此预授权已完成交易</translation>
    </message>
    <message>
        <location filename="../texts.py" line="33"/>
        <source>Not completed: this hold was already released</source>
        <translation>未完成：此预授权已撤销</translation>
    </message>
    <message>
        <location filename="../texts.py" line="34"/>
        <source>Not completed: the hold has expired, the money is free again</source>
        <translation>未完成：预授权已过期，款项已恢复可用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="35"/>
        <source>Not completed: the final amount is more than the hold</source>
        <translation>未完成：最终金额超过预授权金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="36"/>
        <source>Not closed: the account has open holds; complete or release them first</source>
        <translation>未退卡：该账户有未完成的预授权，请先完成或释放</translation>
    </message>
    <message>
        <location filename="../texts.py" line="37"/>
        <source>Declined: the account is closed (card returned)</source>
        <translation>被拒绝：该账户已退卡销户</translation>
    </message>
    <message>
        <location filename="../texts.py" line="38"/>
        <source>Not made: that card is not one of this account&apos;s cards</source>
        <translation>未执行：该卡不属于这个账户</translation>
    </message>
    <message>
        <location filename="../texts.py" line="39"/>
        <source>Not made: that card number is blocked (reported lost) and cannot be issued</source>
        <translation>未执行：该卡号已挂失停用，不能再发</translation>
    </message>
    <message>
        <location filename="../texts.py" line="40"/>
        <source>Not made: that card number is already in use</source>
        <translation>未执行：该卡号已被使用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="45"/>
        <source>Declined: the top-up would pass the shop&apos;s balance cap</source>
        <translation>被拒绝：充值后余额将超过本店上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="47"/>
        <source>Refund refused: the sale was not paid that way</source>
        <translation>退款被拒：该笔消费未使用此支付方式</translation>
    </message>
    <message>
        <location filename="../texts.py" line="48"/>
        <source>Not made: the request was not valid</source>
        <translation>未执行：请求无效</translation>
    </message>
    <message>
        <location filename="../texts.py" line="49"/>
        <source>Not made: transaction number clash, call support</source>
        <translation>未执行：交易号冲突，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="50"/>
        <source>Not made: the terminal could not save it, call support</source>
        <translation>未执行：终端无法保存，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="52"/>
        <source>Declined: the member owes an offline debt; a top-up pays it first</source>
        <translation>已拒绝：会员有未结离线欠款；请先充值还款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="54"/>
        <source>Offline sale not settled: past the shop&apos;s offline limit; tell a supervisor</source>
        <translation>离线消费未结算：超过本店离线限额；请通知主管</translation>
    </message>
    <message>
        <location filename="../texts.py" line="57"/>
        <source>Not made: unexpected answer, call support</source>
        <translation>未执行：答复异常，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="63"/>
        <location filename="../texts.py" line="155"/>
        <source>Being checked</source>
        <translation>核实中</translation>
    </message>
    <message>
        <location filename="../texts.py" line="66"/>
        <source>Not enough money</source>
        <translation>余额不足</translation>
    </message>
    <message>
        <location filename="../texts.py" line="67"/>
        <source>Unknown account</source>
        <translation>账户不存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="68"/>
        <source>Account frozen</source>
        <translation>账户已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="69"/>
        <source>Original not found</source>
        <translation>找不到原收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="70"/>
        <source>Exceeds original</source>
        <translation>超过原收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="71"/>
        <source>Balance limit</source>
        <translation>超过余额上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="72"/>
        <source>Too many holds</source>
        <translation>预授权过多</translation>
    </message>
    <message>
        <location filename="../texts.py" line="73"/>
        <location filename="../texts.py" line="159"/>
        <source>Hold not found</source>
        <translation>找不到预授权</translation>
    </message>
    <message>
        <location filename="../texts.py" line="74"/>
        <source>Already completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location filename="../texts.py" line="75"/>
        <source>Already released</source>
        <translation>已撤销</translation>
    </message>
    <message>
        <location filename="../texts.py" line="76"/>
        <source>Hold expired</source>
        <translation>预授权已过期</translation>
    </message>
    <message>
        <location filename="../texts.py" line="77"/>
        <source>More than held</source>
        <translation>超过预授权金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="78"/>
        <source>Open holds</source>
        <translation>有预授权</translation>
    </message>
    <message>
        <location filename="../texts.py" line="79"/>
        <location filename="../texts.py" line="110"/>
        <source>Account closed</source>
        <translation>已退卡</translation>
    </message>
    <message>
        <location filename="../texts.py" line="80"/>
        <source>Account exists</source>
        <translation>账户已存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="81"/>
        <source>Card not found</source>
        <translation>卡不存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="82"/>
        <source>Card blocked</source>
        <translation>卡已停用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="83"/>
        <source>Card in use</source>
        <translation>卡已被使用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="88"/>
        <source>Balance cap</source>
        <translation>余额上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="89"/>
        <source>Member PIN needed</source>
        <translation>需会员支付密码</translation>
    </message>
    <message>
        <location filename="../texts.py" line="90"/>
        <source>Not paid that way</source>
        <translation>未用此方式支付</translation>
    </message>
    <message>
        <location filename="../texts.py" line="92"/>
        <source>Debt open</source>
        <translation>有欠款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="93"/>
        <source>Offline limit</source>
        <translation>离线限额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="95"/>
        <source>Not made</source>
        <translation>未执行</translation>
    </message>
    <message>
        <location filename="../texts.py" line="100"/>
        <source>Charge</source>
        <translation>收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="101"/>
        <source>Charge (offline)</source>
        <translation>收款（离线）</translation>
    </message>
    <message>
        <location filename="../texts.py" line="102"/>
        <source>Charge (offline, left a debt)</source>
        <translation>收款（离线，产生欠款）</translation>
    </message>
    <message>
        <location filename="../texts.py" line="103"/>
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="104"/>
        <source>Top-up</source>
        <translation>充值</translation>
    </message>
    <message>
        <location filename="../texts.py" line="105"/>
        <source>Hold</source>
        <translation>预授权</translation>
    </message>
    <message>
        <location filename="../texts.py" line="106"/>
        <source>Sale completed</source>
        <translation>完成交易</translation>
    </message>
    <message>
        <location filename="../texts.py" line="107"/>
        <source>Hold released</source>
        <translation>撤销预授权</translation>
    </message>
    <message>
        <location filename="../texts.py" line="108"/>
        <source>New member</source>
        <translation>新会员</translation>
    </message>
    <message>
        <location filename="../texts.py" line="109"/>
        <source>Card replaced</source>
        <translation>换卡</translation>
    </message>
    <message>
        <location filename="../texts.py" line="111"/>
        <source>Shift closed</source>
        <translation>交班</translation>
    </message>
    <message>
        <location filename="../texts.py" line="112"/>
        <source>Card + other payment</source>
        <translation>组合支付</translation>
    </message>
    <message>
        <location filename="../texts.py" line="113"/>
        <source>Refund of a card + other payment</source>
        <translation>组合支付退款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="120"/>
        <source>Cash</source>
        <translation>现金</translation>
    </message>
    <message>
        <location filename="../texts.py" line="121"/>
        <source>WeChat Pay</source>
        <translation>微信支付</translation>
    </message>
    <message>
        <location filename="../texts.py" line="122"/>
        <source>Alipay</source>
        <translation>支付宝</translation>
    </message>
    <message>
        <location filename="../texts.py" line="123"/>
        <source>Bank card</source>
        <translation>银行卡</translation>
    </message>
    <message>
        <location filename="../texts.py" line="124"/>
        <location filename="../texts.py" line="138"/>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <location filename="../texts.py" line="134"/>
        <source>Change</source>
        <translation>找零备用</translation>
    </message>
    <message>
        <location filename="../texts.py" line="136"/>
        <source>Expense</source>
        <translation>杂项支出</translation>
    </message>
    <message>
        <location filename="../texts.py" line="137"/>
        <source>Correction</source>
        <translation>更正</translation>
    </message>
    <message>
        <location filename="../texts.py" line="144"/>
        <source>Lost</source>
        <translation>挂失</translation>
    </message>
    <message>
        <location filename="../texts.py" line="145"/>
        <source>Damaged</source>
        <translation>损坏</translation>
    </message>
    <message>
        <location filename="../texts.py" line="146"/>
        <source>Stolen</source>
        <translation>被盗</translation>
    </message>
    <message>
        <location filename="../texts.py" line="147"/>
        <source>Other reason</source>
        <translation>其他原因</translation>
    </message>
    <message>
        <location filename="../texts.py" line="154"/>
        <source>Held until %1</source>
        <translation>预授权至 %1</translation>
    </message>
    <message>
        <location filename="../texts.py" line="156"/>
        <source>Completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location filename="../texts.py" line="157"/>
        <source>Released</source>
        <translation>已撤销</translation>
    </message>
    <message>
        <location filename="../texts.py" line="158"/>
        <source>Expired</source>
        <translation>已过期</translation>
    </message>
    <message>
        <location filename="../texts.py" line="166"/>
        <source>No connection to the central server: charges are refused until it is back.</source>
        <translation>与中心服务器断开：恢复连接前不能收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="168"/>
        <source>The central server is switching over: try again in a few seconds.</source>
        <translation>中心服务器切换中：请几秒后再试。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="170"/>
        <source>The central server holds no account data: call support. Charges are refused.</source>
        <translation>中心服务器上没有账户数据：请联系技术支持。暂停收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="172"/>
        <source>The central server is set up unsafely: call support. Charges are refused.</source>
        <translation>中心服务器配置不安全：请联系技术支持。暂停收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="174"/>
        <source>The ledger gateway refuses this terminal&apos;s credential (revoked or replaced): call the shop&apos;s IT person. Charges are refused.</source>
        <translation>账本网关拒绝本终端的凭据（已吊销或已更换）：请联系门店 IT 人员。暂停收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="177"/>
        <source>A charge for this account is still being checked: wait for its result.</source>
        <translation>此账户有一笔收款正在核实：请等待结果。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="182"/>
        <source>The last charge is still being processed: wait for its result.</source>
        <translation>上一笔收款仍在处理：请等待结果。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="184"/>
        <source>No open hold: select a hold in the list or scan the card it was made for.</source>
        <translation>没有未完成的预授权：请在列表中选择预授权，或刷该预授权对应的卡。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="186"/>
        <source>This hold is already completed, released or expired.</source>
        <translation>此预授权已完成、已撤销或已过期。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="188"/>
        <source>The terminal is shutting down.</source>
        <translation>终端正在关闭。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="189"/>
        <source>No shift is open: sign in again.</source>
        <translation>没有开班：请重新登录。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="193"/>
        <source>Offline: this terminal has no offline limits from the central server yet: charges are refused.</source>
        <translation>离线：本终端尚未从中心服务器取得离线限额，不能收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="195"/>
        <source>Offline too long: the shop&apos;s maximum offline time is over. Charges are refused until the central server is back.</source>
        <translation>离线时间过长：已超过本店最长离线时间。中心服务器恢复前不能收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="198"/>
        <source>Offline: this card is on the block list (reported lost or stolen): not charged.</source>
        <translation>离线：此卡在挂失名单上（已挂失或被盗），未收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="200"/>
        <source>Offline: a charge that needs a supervisor cannot be made offline.</source>
        <translation>离线：需要主管审批的收款不能离线进行。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="202"/>
        <source>Offline: this amount needs the member&apos;s payment PIN, which cannot be checked offline.</source>
        <translation>离线：此金额需要会员支付密码，离线时无法验证。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="204"/>
        <source>Offline: this terminal has not seen the member&apos;s balance recently: not charged.</source>
        <translation>离线：本终端近期未查询过该会员余额，未收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="206"/>
        <source>Offline: more than the balance this terminal last saw for the member: not charged.</source>
        <translation>离线：超过本终端上次查询到的会员余额，未收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="208"/>
        <source>Offline limit reached for this member at this terminal: not charged.</source>
        <translation>该会员在本终端的离线限额已用完，未收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="210"/>
        <source>Offline budget of this terminal used up: charges are refused until the central server is back.</source>
        <translation>本终端离线额度已用完：中心服务器恢复前不能收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="213"/>
        <source>No cashier signed in: sign in again.</source>
        <translation>没有收银员登录：请重新登录。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="214"/>
        <source>Not started.</source>
        <translation>未开始。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="219"/>
        <source>Offline: %1 of %2 budget used · block list of %3</source>
        <translation>离线：已用额度 %1 / %2 · 挂失名单更新于 %3</translation>
    </message>
    <message>
        <location filename="../texts.py" line="226"/>
        <source>Amount: enter an amount, e.g. 12.50</source>
        <translation>金额：请输入金额，例如 12.50</translation>
    </message>
    <message>
        <location filename="../texts.py" line="227"/>
        <source>Amount: use digits and one decimal point, e.g. 12.50</source>
        <translation>金额：只能输入数字和一个小数点，例如 12.50</translation>
    </message>
    <message>
        <location filename="../texts.py" line="228"/>
        <source>Amount: must not be negative</source>
        <translation>金额：不能为负数</translation>
    </message>
    <message>
        <location filename="../texts.py" line="229"/>
        <source>Amount: at most two decimals (fen)</source>
        <translation>金额：最多两位小数（到分）</translation>
    </message>
    <message>
        <location filename="../texts.py" line="230"/>
        <source>Amount: must be more than zero</source>
        <translation>金额：必须大于零</translation>
    </message>
    <message>
        <location filename="../texts.py" line="231"/>
        <source>Amount: too large for one payment</source>
        <translation>金额：单笔金额过大</translation>
    </message>
    <message>
        <location filename="../texts.py" line="232"/>
        <source>Amount: not a valid amount</source>
        <translation>金额：无效的金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="238"/>
        <source>%1: must not be empty</source>
        <translation>%1：不能为空</translation>
    </message>
    <message>
        <location filename="../texts.py" line="240"/>
        <source>%1: at most 64 characters</source>
        <translation>%1：最多 64 个字符</translation>
    </message>
    <message>
        <location filename="../texts.py" line="241"/>
        <source>%1: only letters, digits and . _ : - are allowed</source>
        <translation>%1：只能包含字母、数字和 . _ : -</translation>
    </message>
    <message>
        <location filename="../texts.py" line="247"/>
        <source>Connecting to the central server…</source>
        <translation>正在连接中心服务器…</translation>
    </message>
    <message>
        <location filename="../texts.py" line="248"/>
        <source>Connected</source>
        <translation>已连接</translation>
    </message>
    <message>
        <location filename="../texts.py" line="249"/>
        <source>No connection to the central server: charges refused</source>
        <translation>与中心服务器断开：暂停收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="250"/>
        <source>Central server switching over: reconnecting…</source>
        <translation>中心服务器切换中：正在重新连接…</translation>
    </message>
    <message>
        <location filename="../texts.py" line="251"/>
        <source>Central server has no account data: call support</source>
        <translation>中心服务器没有账户数据：请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="252"/>
        <source>Central server set up unsafely: call support</source>
        <translation>中心服务器配置不安全：请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="253"/>
        <source>This terminal&apos;s credential is refused: call IT</source>
        <translation>本终端凭据被拒绝：请联系 IT</translation>
    </message>
    <message>
        <location filename="../texts.py" line="258"/>
        <source>Active</source>
        <translation>正常</translation>
    </message>
    <message>
        <location filename="../texts.py" line="259"/>
        <source>Frozen</source>
        <translation>已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="260"/>
        <source>Closed (card returned)</source>
        <translation>已退卡销户</translation>
    </message>
    <message>
        <location filename="../texts.py" line="265"/>
        <source>Cashier id or PIN is wrong (%1 tries left before a lock).</source>
        <translation>工号或密码错误（再错 %1 次将被锁定）。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="268"/>
        <source>Cashier id or PIN is wrong.</source>
        <translation>工号或密码错误。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="271"/>
        <source>Too many wrong PINs: this cashier is locked for %1 min.</source>
        <translation>密码错误次数过多：此收银员已被锁定 %1 分钟。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="274"/>
        <source>This cashier is disabled: ask the back office.</source>
        <translation>此收银员已停用：请联系后台。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="276"/>
        <source>This cashier is not a supervisor.</source>
        <translation>此人不是主管。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="278"/>
        <source>No one approves their own operation: ask another supervisor.</source>
        <translation>不能审批自己的操作：请找另一位主管。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="280"/>
        <source>Cannot reach the central server: check the network and try again.</source>
        <translation>无法连接中心服务器：请检查网络后重试。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="281"/>
        <source>Sign-in failed.</source>
        <translation>登录失败。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="286"/>
        <source>PIN: enter your PIN</source>
        <translation>密码：请输入密码</translation>
    </message>
    <message>
        <location filename="../texts.py" line="287"/>
        <source>PIN: 4 to 12 digits</source>
        <translation>密码：4 到 12 位数字</translation>
    </message>
    <message>
        <location filename="../texts.py" line="294"/>
        <source>Being checked: the central server has not answered yet. The terminal keeps trying.</source>
        <translation>正在确认：中心服务器尚未应答。终端会自动重试。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="301"/>
        <source>Member account %1 opened.</source>
        <translation>会员账户 %1 已开立。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="302"/>
        <source>Card %1 issued.</source>
        <translation>卡 %1 已发放。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="302"/>
        <source>No card issued yet.</source>
        <translation>尚未发卡。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="304"/>
        <source>Member account %1 opened, but the card was not issued:</source>
        <translation>会员账户 %1 已开立，但卡未发放：</translation>
    </message>
    <message>
        <location filename="../texts.py" line="306"/>
        <source>The account was not opened:</source>
        <translation>账户未开立：</translation>
    </message>
    <message>
        <location filename="../texts.py" line="314"/>
        <source>Card %1 blocked: it can no longer be used.</source>
        <translation>卡 %1 已挂失停用，不能再使用。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="316"/>
        <source>New card %1 issued to account %2; the balance stays.</source>
        <translation>新卡 %1 已绑定账户 %2，余额不变。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="319"/>
        <source>The card was not changed:</source>
        <translation>未换卡：</translation>
    </message>
    <message>
        <location filename="../texts.py" line="325"/>
        <source>Account %1 closed. Pay out %2 in cash to the customer.</source>
        <translation>账户 %1 已退卡销户。请退还顾客现金 %2。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="327"/>
        <source>Bonus forfeited: %1</source>
        <translation>赠送金额作废：%1</translation>
    </message>
    <message>
        <location filename="../texts.py" line="328"/>
        <source>The account was not closed:</source>
        <translation>账户未退卡：</translation>
    </message>
    <message>
        <location filename="../texts.py" line="190"/>
        <source>Not charged: the account was changed. Press Enter in the account field to look it up first.</source>
        <translation>未收款：账户已更改。请先在账户栏按回车键查询。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="51"/>
        <source>Abandoned by a supervisor: too old to re-send, handled by hand</source>
        <translation>已由主管放弃：过久无法重发，由人工处理</translation>
    </message>
    <message>
        <location filename="../texts.py" line="91"/>
        <source>Abandoned</source>
        <translation>已放弃</translation>
    </message>
    <message>
        <location filename="../texts.py" line="135"/>
        <source>Safe drop</source>
        <translation>上缴保险柜</translation>
    </message>
    <message>
        <location filename="../texts.py" line="179"/>
        <source>An old operation of this account is too old to re-send: a supervisor must decide it first (Old operations… in the status bar).</source>
        <translation>该账户有一笔旧操作过久无法重发：须先由主管决定（状态栏中的“旧操作…”）。</translation>
    </message>
</context>
<context>
    <name>TillDialog</name>
    <message>
        <location filename="../till_dialog.py" line="233"/>
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../till_dialog.py" line="248"/>
        <source>Checking the supervisor PIN…</source>
        <translation>正在核对主管密码…</translation>
    </message>
</context>
<context>
    <name>TopUpDialog</name>
    <message>
        <location filename="../dialogs.py" line="213"/>
        <source>The promotions cannot be read now: the top-up was not made.</source>
        <translation>现在无法读取促销活动：充值未执行。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="214"/>
        <source>The promotions cannot be read now (no connection to the central server): try again in a moment.</source>
        <translation>现在无法读取促销活动（未连接中心服务器）：请稍后再试。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="225"/>
        <location filename="../dialogs.py" line="273"/>
        <source>Reading the promotions…</source>
        <translation>正在读取促销活动…</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="236"/>
        <source>Bonus %1 (promotion): the account gets %2, of which %1 is bonus (spendable, never paid out).</source>
        <translation>赠送 %1（促销）：账户到账 %2，其中 %1 为赠送金额（可消费，不退现）。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="241"/>
        <source>No promotion for this amount.</source>
        <translation>此金额没有促销。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="244"/>
        <location filename="../dialogs.py" line="256"/>
        <source>Top up</source>
        <translation>充值</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="245"/>
        <source>Take the customer&apos;s money first, then top up the account.</source>
        <translation>请先收取顾客的钱，再为账户充值。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="246"/>
        <location filename="../dialogs.py" line="263"/>
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="247"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="248"/>
        <source>Paid by</source>
        <translation>支付方式</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="253"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="278"/>
        <source>This top-up gets a bonus of %1: check it with the customer, then press Top up again.</source>
        <translation>本次充值赠送 %1：请与顾客确认后再按一次“充值”。</translation>
    </message>
</context>
</TS>
