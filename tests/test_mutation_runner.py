"""The mutation runner copies every app the settings install, and maps every module it measures
to test files that exist (a copy without an installed app cannot start Django at all)."""

from __future__ import annotations

from django.apps import apps

from tests.mutation.run import COPIED, MODULES, QUICK, ROOT


def test_every_installed_project_app_is_copied():
    local = {
        config.name.split(".")[0]
        for config in apps.get_app_configs()
        if (ROOT / config.name.split(".")[0]).is_dir()
    }
    assert local, "no project app found"
    assert local <= set(COPIED), sorted(local - set(COPIED))


def test_every_measured_module_exists_and_has_tests_that_exist():
    for module, tests in MODULES.items():
        assert (ROOT / module).is_file(), module
        assert tests and all((ROOT / path).is_file() for path in tests), (module, tests)
    assert set(QUICK) <= set(MODULES)
