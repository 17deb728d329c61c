"""The reconcile service's settings: one declaration (config.SETTINGS) makes the dataclass,
the validation and the flags; its ConfigError is core's, so every handler of bad input
treats a wrong setting alike. Needs no server."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from core.errors import ConfigError as CoreConfigError, InvalidRequest
from core.exit_codes import EXIT_BAD_INPUT, classify
from reconcile_service.config import SETTINGS, ConfigError, Settings, load_settings


def test_config_error_is_cores_and_keeps_its_message_word_for_word():
    assert ConfigError is CoreConfigError and issubclass(ConfigError, InvalidRequest)
    with pytest.raises(ConfigError) as info:
        load_settings({"batch_size": 0}, environ={})
    message = "batch_size (from command line): must be at least 1, got 0"
    assert str(info.value) == message and info.value.args == (message,)
    assert (info.value.field, info.value.reason) == ("batch_size", "must be at least 1, got 0")
    assert classify(info.value) == (EXIT_BAD_INPUT, message)
    assert str(pickle.loads(pickle.dumps(info.value))) == message
    two = CoreConfigError("redis_url", "no host")          # core's own form is unchanged
    assert (str(two), two.field, two.reason) == ("redis_url: no host", "redis_url", "no host")


def test_the_dataclass_is_the_declaration():
    defaults = Settings()
    assert [(f.name, f.type, f.default) for f in dataclasses.fields(Settings)] == [
        (s.name, s.type, s.default) for s in SETTINGS]
    assert all(getattr(defaults, s.name) == s.default for s in SETTINGS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        defaults.batch_size = 1
    assert dataclasses.replace(defaults, batch_size=5).batch_size == 5
    assert defaults.resolved_database_url().endswith("reconcile.sqlite3")
