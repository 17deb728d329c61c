"""Redis URLs: what each form names, the refusals (a ConfigError naming redis_url and the
reason, never a ValueError traceback nor a silent database 0), redaction of every
password, and that each form actually connects to a real server."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from core import ConfigError, InvalidRequest, Ledger
from core.connection import connect, is_sentinel, parse_redis_url, redacted
from tests.conftest import REDIS_HOST, REDIS_PORT


@pytest.mark.parametrize("url, kind, hosts, db", [
    ("redis://127.0.0.1:6379/0", "standalone", ((("127.0.0.1", 6379),)), 0),
    ("redis://127.0.0.1/3", "standalone", (("127.0.0.1", 6379),), 3),
    ("redis://h", "standalone", (("h", 6379),), 0),
    ("redis://h:1/", "standalone", (("h", 1),), 0),
    ("redis://localhost?db=2", "standalone", (("localhost", 6379),), 2),
    ("redis://[::1]:6380/1", "standalone", (("::1", 6380),), 1),
    ("rediss://h:6380/0?ssl_ca_certs=/ca.pem", "standalone", (("h", 6380),), 0),
    ("redis+cluster://a:7000,b:7001", "cluster", (("a", 7000), ("b", 7001)), 0),
    ("redis+cluster://a:7000/0", "cluster", (("a", 7000),), 0),
    ("redis+sentinel://s1:26379,s2:26380,s3/cashier/4", "sentinel",
     (("s1", 26379), ("s2", 26380), ("s3", 26379)), 4),
    ("rediss+sentinel://s1/cashier", "sentinel", (("s1", 26379),), 0),
])
def test_forms(url, kind, hosts, db):
    target = parse_redis_url(url)
    assert (target.kind, target.hosts, target.db) == (kind, hosts, db)
    assert target.tls == url.startswith("rediss")


def test_credentials_of_redis_and_of_the_sentinels_are_apart():
    t = parse_redis_url("redis+sentinel://cashier-terminal:p%40ss@s1:1,s2:2/shop/0"
                        "?sentinel_username=watch&sentinel_password=spw&socket_timeout=1.5")
    assert (t.username, t.password) == ("cashier-terminal", "p@ss")
    assert (t.sentinel_username, t.sentinel_password) == ("watch", "spw")
    assert t.service_name == "shop" and t.options == {"socket_timeout": 1.5}
    assert parse_redis_url("redis://secret@h/0").password == "secret"
    assert parse_redis_url("unix:///run/redis.sock?db=1").socket_path == "/run/redis.sock"


@pytest.mark.parametrize("url, words", [
    ("redis://127.0.0.1:notaport/0", "port 'notaport'"),
    ("redis://127.0.0.1:0/0", "port '0'"),
    ("redis://127.0.0.1:65536/0", "port '65536'"),
    ("redis://127.0.0.1:/0", "port after ':' is missing"),
    ("redis://127.0.0.1:6379/abc", "database 'abc'"),
    ("redis://127.0.0.1:6379/-1", "database '-1'"),
    ("redis://127.0.0.1:6379/0/1", "database '0/1'"),
    ("redis://127.0.0.1:6379/1?db=2", "disagree"),
    ("redis://h/0?db=x", "database 'x'"),
    ("http://127.0.0.1:6379/0", "scheme 'http'"),
    ("127.0.0.1:6379", "scheme"),
    ("redis:/h/0", "scheme"),
    ("", "must be a URL"),
    ("redis://:6379/0", "not host:port"),
    ("redis:///0", "host is missing"),
    ("redis://a:1,b:2/0", "several hosts"),
    ("redis+cluster://a:1,/0", "host is missing"),
    ("redis+cluster://a:1/3", "database 0 only"),
    ("redis://h/0?sockettimeout=1", "unknown option 'sockettimeout'"),
    ("redis://h/0?socket_timeout=abc", "socket_timeout='abc'"),
    ("redis://h/0?socket_timeout=1&socket_timeout=2", "twice"),
    ("redis://h/0?ssl_ca_certs=/ca.pem", "needs a TLS URL"),
    ("redis://h/0?sentinel_password=x", "redis+sentinel:// URLs only"),
    ("redis+sentinel://s1:26379", "service name is missing"),
    ("redis+sentinel://s1:26379/", "service name is missing"),
    ("redis+sentinel://s1:26379/shop/abc", "database 'abc'"),
    ("redis+sentinel://s1:26379/shop/0/x", "not /<service_name>[/<db>]"),
    ("redis+sentinel://s1:26379/sh op/0", "spaces"),
    ("redis+sentinel://s1:notaport/shop", "port 'notaport'"),
    ("redis://[::1/0", "does not parse"),
    ("redis://h/0#frag", "'#' part"),
    ("unix://", "path is missing"),
])
def test_refusals_name_the_field_and_the_reason(url, words):
    with pytest.raises(ConfigError) as info:
        parse_redis_url(url)
    assert info.value.field == "redis_url"
    assert isinstance(info.value, InvalidRequest)
    assert words in info.value.reason, info.value.reason
    with pytest.raises(ConfigError):          # every entry point refuses the same way
        connect(url)
    with pytest.raises(ConfigError):
        Ledger.from_url(url)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.builds(lambda s, rest: s + "://" + rest,
                                        st.sampled_from(["redis", "rediss", "redis+cluster",
                                                         "redis+sentinel", "rediss+sentinel", "unix"]),
                                        st.text(max_size=50)))
def test_any_text_parses_or_is_refused_with_a_config_error(url):
    try:
        target = parse_redis_url(url)
    except ConfigError as exc:
        assert exc.field == "redis_url" and exc.reason
        return
    assert target.db >= 0 and all(1 <= port <= 65535 for _, port in target.hosts)
    assert target.kind != "sentinel" or target.service_name


@pytest.mark.parametrize("url, secrets", [
    ("redis+sentinel://u:pw-1@s1:1,s2:2/shop/0?sentinel_password=pw-2", ["pw-1", "pw-2"]),
    ("rediss+sentinel://s1/shop?sentinel_username=su&sentinel_password=pw-3&password=pw-4",
     ["pw-3", "pw-4"]),
    ("redis://pw-5@h/0", ["pw-5"]),
])
def test_redacted_hides_every_password_and_keeps_the_rest(url, secrets):
    shown = redacted(url)
    assert not any(s in shown for s in secrets) and "***" in shown
    assert "/shop" in shown or "redis://" in shown


def test_redacted_never_raises():
    assert redacted("redis://[::1/0") == "<unparsable Redis URL>"


def test_standalone_and_option_forms_reach_a_real_redis():
    for url in (f"redis://{REDIS_HOST}:{REDIS_PORT}/7", f"redis://{REDIS_HOST}:{REDIS_PORT}?db=7",
                f"redis://{REDIS_HOST}:{REDIS_PORT}/7?socket_timeout=3&client_name=t"):
        client = connect(url)
        try:
            assert client.ping() and client.connection_pool.connection_kwargs["db"] == 7
            assert not is_sentinel(client)
        finally:
            client.close()


def test_wait_replicas_travels_with_the_url():
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/7?wait_replicas=1&wait_timeout_ms=50"
    assert parse_redis_url(url).ledger_options == {"wait_replicas": 1, "wait_timeout_ms": 50}
    ledger = Ledger.from_url(url)
    assert (ledger.wait_replicas, ledger.wait_timeout_ms) == (1, 50)
    assert Ledger.from_url(url, wait_replicas=0).wait_replicas == 0     # the caller's own wins
    for bad in ("wait_replicas=-1", "wait_replicas=x", "wait_timeout_ms=0"):
        with pytest.raises(ConfigError):
            parse_redis_url(f"redis://h/0?{bad}")


def test_a_parsed_url_never_shows_its_passwords():
    target = parse_redis_url("redis+sentinel://u:pw-9@s/shop/0?sentinel_password=pw-8")
    assert "pw-9" not in repr(target) and "pw-8" not in repr(target)
