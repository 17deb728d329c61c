"""The read-only back-office page the daemon serves (issue 16): today's liability, recent
discrepancies, member search, an account's statement and the reports to download, for
the shop owner and the accountant; and (issue 29) a dashboard of today and charts over
days, weeks and months (`views` assembles them from the report functions, `charts`
draws them as inline SVG on the server). Server-rendered (Flask, Jinja2 templates),
login required (argon2 password hashes, `auth`), a signed session cookie (itsdangerous,
through Flask), served by waitress on its own port, loopback by default (`server`).
"""
