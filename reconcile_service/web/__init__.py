"""The read-only back-office page the daemon serves (issue 16): today's liability, recent
discrepancies, member search, an account's statement and the reports to download, for
the shop owner and the accountant. Server-rendered (Flask, Jinja2 templates), login
required (argon2 password hashes, `auth`), a signed session cookie (itsdangerous, through
Flask), served by waitress on its own port, loopback by default (`server`).
"""
