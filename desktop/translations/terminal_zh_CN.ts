<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Keypad</name>
    <message>
        <location filename="../keypad.py" line="51" />
        <source>Delete the last character</source>
        <translation>删除最后一个字符</translation>
    </message>
    <message>
        <location filename="../keypad.py" line="52" />
        <source>Clear the field</source>
        <translation>清空此栏</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main_window.py" line="98" />
        <source>Cashier terminal</source>
        <translation>收银终端</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="99" />
        <source>Member card payments</source>
        <translation>会员卡收款</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="100" />
        <source>Close shift…</source>
        <translation>交班…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="101" />
        <source>Sign out</source>
        <translation>退出登录</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="102" />
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="112" />
        <source>Terminal %1</source>
        <translation>终端 %1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="115" />
        <source>Cashier %1</source>
        <translation>收银员 %1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="116" />
        <source>Shift %1 · %2</source>
        <translation>第 %1 班 · %2</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="119" />
        <source>Nobody signed in</source>
        <translation>未登录</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="122" />
        <source>Being checked: %1</source>
        <translation>核实中：%1</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="151" />
        <source>Wait for the current operation to finish.</source>
        <translation>请等待当前操作完成。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="158" />
        <source>Resolved after a restart:</source>
        <translation>重启后已核实：</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="195" />
        <source>The shift cannot close yet: %1 operation(s) are still being checked.</source>
        <translation>暂不能交班：还有 %1 笔交易正在核实。</translation>
    </message>
</context>
<context>
    <name>RefundDialog</name>
    <message>
        <location filename="../dialogs.py" line="71" />
        <location filename="../dialogs.py" line="80" />
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="73" />
        <source>Refund of the charge of %1 to account %2. At most %3 can still be refunded.</source>
        <translation>退还账户 %2 的扣款 %1。最多还可退 %3。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="77" />
        <source>Amount to refund</source>
        <translation>退款金额</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="78" />
        <location filename="../dialogs.py" line="100" />
        <source>Supervisor id</source>
        <translation>主管工号</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="79" />
        <source>Supervisor PIN</source>
        <translation>主管密码</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="81" />
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="93" />
        <source>Amount: at most %1 can be refunded</source>
        <translation>金额：最多可退 %1</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="111" />
        <source>Checking the supervisor PIN…</source>
        <translation>正在核对主管密码…</translation>
    </message>
</context>
<context>
    <name>SalePage</name>
    <message>
        <location filename="../sale.py" line="178" />
        <source>Account (scan the card or type)</source>
        <translation>账户（刷卡或输入）</translation>
    </message>
    <message>
        <location filename="../sale.py" line="179" />
        <source>Card or account number</source>
        <translation>卡号或账号</translation>
    </message>
    <message>
        <location filename="../sale.py" line="180" />
        <source>Look up</source>
        <translation>查询</translation>
    </message>
    <message>
        <location filename="../sale.py" line="181" />
        <location filename="../sale.py" line="189" />
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../sale.py" line="183" />
        <source>Charge  (F12)</source>
        <translation>收款  (F12)</translation>
    </message>
    <message>
        <location filename="../sale.py" line="184" />
        <source>Next customer</source>
        <translation>下一位顾客</translation>
    </message>
    <message>
        <location filename="../sale.py" line="185" />
        <source>This shift</source>
        <translation>本班交易</translation>
    </message>
    <message>
        <location filename="../sale.py" line="186" />
        <source>Refund…</source>
        <translation>退款…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="187" />
        <source>Top up…</source>
        <translation>充值…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="189" />
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../sale.py" line="189" />
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../sale.py" line="189" />
        <location filename="../sale.py" line="241" />
        <location filename="../sale.py" line="266" />
        <location filename="../sale.py" line="299" />
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <location filename="../sale.py" line="189" />
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location filename="../sale.py" line="190" />
        <source>Balance after</source>
        <translation>交易后余额</translation>
    </message>
    <message>
        <location filename="../sale.py" line="190" />
        <source>Cashier</source>
        <translation>收银员</translation>
    </message>
    <message>
        <location filename="../sale.py" line="246" />
        <source>Looking up %1…</source>
        <translation>正在查询 %1…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="264" />
        <source>Account: unknown account %1</source>
        <translation>账户：没有账户 %1</translation>
    </message>
    <message>
        <location filename="../sale.py" line="268" />
        <source>Account: cannot look up now (no connection to the central server)</source>
        <translation>账户：暂时无法查询（与中心服务器断开）</translation>
    </message>
    <message>
        <location filename="../sale.py" line="276" />
        <source>Scan a card to start</source>
        <translation>请刷卡开始</translation>
    </message>
    <message>
        <location filename="../sale.py" line="279" />
        <source>Account %1 · %2
Balance %3</source>
        <translation>账户 %1 · %2
余额 %3</translation>
    </message>
    <message>
        <location filename="../sale.py" line="343" />
        <source>Charging %1 to %2…</source>
        <translation>正在从 %2 扣款 %1…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="343" />
        <source>Refunding %1 to %2…</source>
        <translation>正在向 %2 退款 %1…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="344" />
        <source>Topping up %1 to %2…</source>
        <translation>正在为 %2 充值 %1…</translation>
    </message>
    <message>
        <location filename="../sale.py" line="371" />
        <source>Approved: %1 charged</source>
        <translation>成功：已扣款 %1</translation>
    </message>
    <message>
        <location filename="../sale.py" line="371" />
        <source>Refunded: %1</source>
        <translation>已退款：%1</translation>
    </message>
    <message>
        <location filename="../sale.py" line="372" />
        <source>Topped up: %1</source>
        <translation>已充值：%1</translation>
    </message>
    <message>
        <location filename="../sale.py" line="374" />
        <source>New balance %1</source>
        <translation>新余额 %1</translation>
    </message>
    <message>
        <location filename="../sale.py" line="383" />
        <source>Being checked: the central server has not answered yet.
Do NOT charge again. The terminal keeps trying on its own.</source>
        <translation>核实中：中心服务器尚未答复。
请勿重复收款，终端会自动重试。</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../settings.py" line="137" />
        <source>Terminal settings</source>
        <translation>终端设置</translation>
    </message>
    <message>
        <location filename="../settings.py" line="138" />
        <source>This terminal needs a name and the address of the central server. The address is tested before it is saved.</source>
        <translation>请填写本终端的编号和中心服务器地址。地址在保存前会先测试连接。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="140" />
        <location filename="../settings.py" line="197" />
        <source>Terminal id</source>
        <translation>终端编号</translation>
    </message>
    <message>
        <location filename="../settings.py" line="141" />
        <source>Central Redis URL</source>
        <translation>中心 Redis 地址</translation>
    </message>
    <message>
        <location filename="../settings.py" line="142" />
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../settings.py" line="143" />
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <location filename="../settings.py" line="144" />
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <location filename="../settings.py" line="145" />
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../settings.py" line="149" />
        <source>Same as the computer</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../settings.py" line="165" />
        <source>Central Redis URL: must not be empty</source>
        <translation>中心 Redis 地址：不能为空</translation>
    </message>
    <message>
        <location filename="../settings.py" line="168" />
        <source>Testing the connection…</source>
        <translation>正在测试连接…</translation>
    </message>
    <message>
        <location filename="../settings.py" line="176" />
        <source>Connected: the central server answers.</source>
        <translation>已连接：中心服务器有响应。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="178" />
        <source>Connected, but the server holds no ledger yet: run `cashierctl init` there first.</source>
        <translation>已连接，但服务器上还没有账本：请先在服务器上运行 `cashierctl init`。</translation>
    </message>
    <message>
        <location filename="../settings.py" line="187" />
        <source>Central Redis URL: must start with redis://, rediss:// or redis+cluster://</source>
        <translation>中心 Redis 地址：必须以 redis://、rediss:// 或 redis+cluster:// 开头</translation>
    </message>
    <message>
        <location filename="../settings.py" line="190" />
        <source>Could not connect: %1</source>
        <translation>无法连接：%1</translation>
    </message>
    <message>
        <location filename="../settings.py" line="201" />
        <source>Test the connection before saving.</source>
        <translation>请先测试连接再保存。</translation>
    </message>
</context>
<context>
    <name>ShiftReportDialog</name>
    <message>
        <location filename="../report.py" line="120" />
        <location filename="../report.py" line="134" />
        <source>Shift report</source>
        <translation>交班报表</translation>
    </message>
    <message>
        <location filename="../report.py" line="121" />
        <source>Print…</source>
        <translation>打印…</translation>
    </message>
    <message>
        <location filename="../report.py" line="122" />
        <source>Save as PDF…</source>
        <translation>保存为 PDF…</translation>
    </message>
    <message>
        <location filename="../report.py" line="123" />
        <source>Save as CSV…</source>
        <translation>保存为 CSV…</translation>
    </message>
    <message>
        <location filename="../report.py" line="124" />
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../report.py" line="131" />
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../report.py" line="131" />
        <source>Count</source>
        <translation>笔数</translation>
    </message>
    <message>
        <location filename="../report.py" line="131" />
        <source>Sum</source>
        <translation>金额合计</translation>
    </message>
    <message>
        <location filename="../report.py" line="132" />
        <source>All cashiers</source>
        <translation>全部收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="132" />
        <source>Declined</source>
        <translation>被拒绝</translation>
    </message>
    <message>
        <location filename="../report.py" line="133" />
        <source>Net (charges minus refunds)</source>
        <translation>净额（扣款减退款）</translation>
    </message>
    <message>
        <location filename="../report.py" line="133" />
        <source>By cashier</source>
        <translation>按收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="135" />
        <source>Terminal %1, shift %2</source>
        <translation>终端 %1，第 %2 班</translation>
    </message>
    <message>
        <location filename="../report.py" line="137" />
        <source>Opened %1 by %2</source>
        <translation>%1 由 %2 开班</translation>
    </message>
    <message>
        <location filename="../report.py" line="139" />
        <source>Closed %1</source>
        <translation>%1 交班</translation>
    </message>
    <message>
        <location filename="../report.py" line="148" />
        <source>%1 operation(s) still being checked are not counted.</source>
        <translation>%1 笔正在核实的交易未计入。</translation>
    </message>
    <message>
        <location filename="../report.py" line="151" />
        <source>Cashier</source>
        <translation>收银员</translation>
    </message>
    <message>
        <location filename="../report.py" line="182" />
        <source>Sent to the printer.</source>
        <translation>已发送到打印机。</translation>
    </message>
    <message>
        <location filename="../report.py" line="186" />
        <source>PDF files (*.pdf)</source>
        <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
        <location filename="../report.py" line="186" />
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../report.py" line="187" />
        <source>Save the shift report</source>
        <translation>保存交班报表</translation>
    </message>
    <message>
        <location filename="../report.py" line="193" />
        <source>Could not save: %1</source>
        <translation>无法保存：%1</translation>
    </message>
    <message>
        <location filename="../report.py" line="195" />
        <source>Saved: %1</source>
        <translation>已保存：%1</translation>
    </message>
</context>
<context>
    <name>SignInPage</name>
    <message>
        <location filename="../signin.py" line="74" />
        <source>Sign in to start selling</source>
        <translation>登录后开始收银</translation>
    </message>
    <message>
        <location filename="../signin.py" line="75" />
        <location filename="../signin.py" line="94" />
        <source>Cashier id</source>
        <translation>收银员工号</translation>
    </message>
    <message>
        <location filename="../signin.py" line="76" />
        <source>PIN</source>
        <translation>密码</translation>
    </message>
    <message>
        <location filename="../signin.py" line="77" />
        <source>Scan your badge or type your id</source>
        <translation>刷工牌或输入工号</translation>
    </message>
    <message>
        <location filename="../signin.py" line="78" />
        <source>4 to 12 digits</source>
        <translation>4 到 12 位数字</translation>
    </message>
    <message>
        <location filename="../signin.py" line="79" />
        <source>Sign in</source>
        <translation>登录</translation>
    </message>
    <message>
        <location filename="../signin.py" line="106" />
        <source>Checking…</source>
        <translation>正在核对…</translation>
    </message>
</context>
<context>
    <name>Texts</name>
    <message>
        <location filename="../texts.py" line="17" />
        <location filename="../texts.py" line="38" />
        <source>Approved</source>
        <translation>成功</translation>
    </message>
    <message>
        <location filename="../texts.py" line="18" />
        <source>Declined: not enough money on the account</source>
        <translation>被拒绝：账户余额不足</translation>
    </message>
    <message>
        <location filename="../texts.py" line="19" />
        <source>Declined: unknown account</source>
        <translation>被拒绝：账户不存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="20" />
        <source>Declined: the account is frozen</source>
        <translation>被拒绝：账户已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="21" />
        <source>Refund refused: the original charge was not found</source>
        <translation>退款被拒绝：找不到原扣款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="22" />
        <source>Refund refused: more than the charge left to refund</source>
        <translation>退款被拒绝：超过原扣款可退金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="23" />
        <source>Declined: the balance would pass its upper limit</source>
        <translation>被拒绝：余额将超过上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="24" />
        <source>Declined: the account is not frozen</source>
        <translation>被拒绝：账户未冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="25" />
        <source>Declined: the account already exists</source>
        <translation>被拒绝：账户已存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="26" />
        <source>Not made: the request was not valid</source>
        <translation>未执行：请求无效</translation>
    </message>
    <message>
        <location filename="../texts.py" line="27" />
        <source>Not made: transaction number clash, call support</source>
        <translation>未执行：交易号冲突，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="28" />
        <source>Not made: the terminal could not save it, call support</source>
        <translation>未执行：终端无法保存，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="30" />
        <source>Not made: unexpected answer, call support</source>
        <translation>未执行：答复异常，请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="36" />
        <source>Being checked</source>
        <translation>核实中</translation>
    </message>
    <message>
        <location filename="../texts.py" line="39" />
        <source>Not enough money</source>
        <translation>余额不足</translation>
    </message>
    <message>
        <location filename="../texts.py" line="40" />
        <source>Unknown account</source>
        <translation>账户不存在</translation>
    </message>
    <message>
        <location filename="../texts.py" line="41" />
        <source>Account frozen</source>
        <translation>账户已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="42" />
        <source>Original not found</source>
        <translation>找不到原扣款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="43" />
        <source>Exceeds original</source>
        <translation>超过原扣款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="44" />
        <source>Balance limit</source>
        <translation>超过余额上限</translation>
    </message>
    <message>
        <location filename="../texts.py" line="46" />
        <source>Not made</source>
        <translation>未执行</translation>
    </message>
    <message>
        <location filename="../texts.py" line="51" />
        <source>Charge</source>
        <translation>扣款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="52" />
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="53" />
        <source>Top-up</source>
        <translation>充值</translation>
    </message>
    <message>
        <location filename="../texts.py" line="60" />
        <source>No connection to the central server: charges are refused until it is back.</source>
        <translation>与中心服务器断开：恢复连接前不能收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="62" />
        <source>The central server holds no account data: call support. Charges are refused.</source>
        <translation>中心服务器上没有账户数据：请联系技术支持。暂停收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="64" />
        <source>The central server is set up unsafely: call support. Charges are refused.</source>
        <translation>中心服务器配置不安全：请联系技术支持。暂停收款。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="66" />
        <source>A charge for this account is still being checked: wait for its result.</source>
        <translation>此账户有一笔扣款正在核实：请等待结果。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="68" />
        <source>The last charge is still being processed: wait for its result.</source>
        <translation>上一笔扣款仍在处理：请等待结果。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="70" />
        <source>The terminal is shutting down.</source>
        <translation>终端正在关闭。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="71" />
        <source>No shift is open: sign in again.</source>
        <translation>没有开班：请重新登录。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="72" />
        <source>Not started.</source>
        <translation>未开始。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="77" />
        <source>Amount: enter an amount, e.g. 12.50</source>
        <translation>金额：请输入金额，例如 12.50</translation>
    </message>
    <message>
        <location filename="../texts.py" line="78" />
        <source>Amount: use digits and one decimal point, e.g. 12.50</source>
        <translation>金额：只能输入数字和一个小数点，例如 12.50</translation>
    </message>
    <message>
        <location filename="../texts.py" line="79" />
        <source>Amount: must not be negative</source>
        <translation>金额：不能为负数</translation>
    </message>
    <message>
        <location filename="../texts.py" line="80" />
        <source>Amount: at most two decimals (fen)</source>
        <translation>金额：最多两位小数（到分）</translation>
    </message>
    <message>
        <location filename="../texts.py" line="81" />
        <source>Amount: must be more than zero</source>
        <translation>金额：必须大于零</translation>
    </message>
    <message>
        <location filename="../texts.py" line="82" />
        <source>Amount: too large for one payment</source>
        <translation>金额：单笔金额过大</translation>
    </message>
    <message>
        <location filename="../texts.py" line="83" />
        <source>Amount: not a valid amount</source>
        <translation>金额：无效的金额</translation>
    </message>
    <message>
        <location filename="../texts.py" line="89" />
        <source>%1: must not be empty</source>
        <translation>%1：不能为空</translation>
    </message>
    <message>
        <location filename="../texts.py" line="91" />
        <source>%1: at most 64 characters</source>
        <translation>%1：最多 64 个字符</translation>
    </message>
    <message>
        <location filename="../texts.py" line="92" />
        <source>%1: only letters, digits and . _ : - are allowed</source>
        <translation>%1：只能包含字母、数字和 . _ : -</translation>
    </message>
    <message>
        <location filename="../texts.py" line="98" />
        <source>Connecting to the central server…</source>
        <translation>正在连接中心服务器…</translation>
    </message>
    <message>
        <location filename="../texts.py" line="99" />
        <source>Connected</source>
        <translation>已连接</translation>
    </message>
    <message>
        <location filename="../texts.py" line="100" />
        <source>No connection to the central server: charges refused</source>
        <translation>与中心服务器断开：暂停收款</translation>
    </message>
    <message>
        <location filename="../texts.py" line="101" />
        <source>Central server has no account data: call support</source>
        <translation>中心服务器没有账户数据：请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="102" />
        <source>Central server set up unsafely: call support</source>
        <translation>中心服务器配置不安全：请联系技术支持</translation>
    </message>
    <message>
        <location filename="../texts.py" line="107" />
        <source>Active</source>
        <translation>正常</translation>
    </message>
    <message>
        <location filename="../texts.py" line="108" />
        <source>Frozen</source>
        <translation>已冻结</translation>
    </message>
    <message>
        <location filename="../texts.py" line="113" />
        <source>Cashier id or PIN is wrong (%1 tries left before a lock).</source>
        <translation>工号或密码错误（再错 %1 次将被锁定）。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="116" />
        <source>Cashier id or PIN is wrong.</source>
        <translation>工号或密码错误。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="119" />
        <source>Too many wrong PINs: this cashier is locked for %1 min.</source>
        <translation>密码错误次数过多：此收银员已被锁定 %1 分钟。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="122" />
        <source>This cashier is disabled: ask the back office.</source>
        <translation>此收银员已停用：请联系后台。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="124" />
        <source>This cashier is not a supervisor.</source>
        <translation>此人不是主管。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="126" />
        <source>Cannot reach the central server: check the network and try again.</source>
        <translation>无法连接中心服务器：请检查网络后重试。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="127" />
        <source>Sign-in failed.</source>
        <translation>登录失败。</translation>
    </message>
    <message>
        <location filename="../texts.py" line="132" />
        <source>PIN: enter your PIN</source>
        <translation>密码：请输入密码</translation>
    </message>
    <message>
        <location filename="../texts.py" line="133" />
        <source>PIN: 4 to 12 digits</source>
        <translation>密码：4 到 12 位数字</translation>
    </message>
</context>
<context>
    <name>TopUpDialog</name>
    <message>
        <location filename="../dialogs.py" line="175" />
        <location filename="../dialogs.py" line="179" />
        <source>Top up</source>
        <translation>充值</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="176" />
        <source>Take the customer's money first, then top up the account.</source>
        <translation>请先收取顾客的钱，再为账户充值。</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="177" />
        <location filename="../dialogs.py" line="187" />
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="178" />
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="180" />
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
</TS>