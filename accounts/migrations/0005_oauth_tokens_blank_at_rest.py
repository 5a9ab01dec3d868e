"""Tokens issued before hashed storage: keep only their checksum, blank the clear-text column."""

from django.db import migrations


def blank_clear_tokens(apps, schema_editor):
    # update() bypasses the checksum field's pre_save, which would hash the blank value instead.
    for name in ("AccessToken", "RefreshToken"):
        model = apps.get_model("oauth2_provider", name)
        model.objects.exclude(token="").exclude(token_checksum="").update(token="")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_oauth_rate_window"),
        ("oauth2_provider", "0022_refreshtoken_token_family_index"),
    ]

    operations = [migrations.RunPython(blank_clear_tokens, migrations.RunPython.noop)]
