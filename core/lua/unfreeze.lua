--[[
unfreeze: set the account's status to 'active' (journaled with amount 0).
ACCOUNT_NOT_FROZEN: the account is active already. The code is account_status.lua's,
shared with freeze.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ACCOUNT_NOT_FROZEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include account_status

return set_account_status('unfreeze', 'active', 'ACCOUNT_NOT_FROZEN')
