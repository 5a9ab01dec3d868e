"""The redaction corpus: texts agents paste into issues, with what must go and what must stay.

SECRETS: each text with the substrings that must disappear and the kind each must be reported as.
LOOKALIKES: texts with nothing to redact (ids, SHAs, versions, timestamps, near-miss numbers);
each must come back byte-identical. Every key, token and number here is made up for these tests:
cards and IBANs are the issuers' published test numbers, keys are random strings in the
providers' formats.
"""

from __future__ import annotations

from typing import NamedTuple


class Secret(NamedTuple):
    text: str
    found: tuple[tuple[str, str], ...]  # (substring that must disappear, its kind)


# Where a standalone finding sits in what agents paste: a log line, a JSON event, a stack trace,
# an agent's note, a shell command.
CONTEXTS = (
    "2026-12-03T14:02:11.481Z ERROR weft.issues run 17 failed: {v} rejected (attempt 3)",
    '{{"event": "issue.submitted", "task": 42, "detail": "{v}", "at": "2026-12-03T14:02:11Z"}}',
    'Traceback (most recent call last):\n  File "/srv/weft/issues/services.py", line 88, in issue_submit\n'
    '    raise ValueError("bad input {v}")\nValueError: bad input {v}',
    "> agent note for task #128: saw {v} in the deploy output, build a3f9c21",
    "$ grep -rn '{v}' logs/ | head -3",
)

STANDALONE = {
    "EMAIL": (
        "maria.gonzalez@example.net",
        "j.doe+weft@mail.example.co.uk",
        "ops-team@corp.example",
        "dev_42@sub.example.io",
        "Priya.Raman@Example.COM",
        "a@b.co",
        "first.last@xn--bcher-kva.example",
        "noreply@github-actions.example.org",
    ),
    "PHONE": (
        "+44 20 7946 0958",
        "+1 415 555 2671",
        "+14155552671",
        "+33 6 12 34 56 78",
        "+49 30 12345678",
        "+81-3-1234-5678",
        "(415) 555-2671",
        "415-555-2671",
        "415.555.2671",
        "020 7946 0958",
        "07700 900123",
        "06 12 34 56 78",
        "030 12345678",
        "+1 (212) 555-0199",
        "+91 98765 43210",
        "1-800-555-0199",
    ),
    "IP": (
        "203.0.113.42",
        "198.51.100.7",
        "10.12.0.5",
        "192.168.1.20",
        "172.16.254.1",
        "2001:db8:85a3::8a2e:370:7334",
        "fe80::1ff:fe23:4567:890a",
        "2001:0db8:0000:0000:0000:ff00:0042:8329",
        "::ffff:192.0.2.128",
    ),
    "API_KEY": (
        "sk-ant-api03-qfwNINkUql24t2NwI4qYeY7e5a4vMLGJQH1ip3xoMlPuLK7fjc-1okaCY_rC0Xu_MAjveqvQAMyAnxcqAA",
        "sk-ant-admin01-PBQGY2_OxTSFej9ftmSi7hrhM-2VGcvdsvPn-BLa",
        "sk-proj-tfp-YLiKwP3NjO_bL9p-mH6z9LyJ681ibiBHmPV_ga8OoP1U",
        "sk-QFOdNePKRY2RzYOemzhopsjCSlVbRwfCIlL2lYTpkCZLQgy2",
        "sk-svcacct-5lx-6uFVv08_SYjSTFobwjYgjrxb9M_LoDOGsRZO",
        "ghp_LmyzsuIMjOws4yZrhep0FnalgJKjvXwyYIzH",
        "gho_d6ssldxeTwlvRQFPBnUmQSI7cseZMl8kLx5u",
        "ghs_vo8QCUl1mRKFWRw87m6TRgfU24TWqojb6L8q",
        "ghu_7MSpYa0SLOHkcpnFCBnCBbei1G7T8gRXVQya",
        "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",
        "AKIA6JPJCIORVHDDSC8F",
        "ASIA280IIB9B7MOSK55K",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-937792993016-4921900174983-RRwpiOdTNNQHO538Fb5b8xF7",
        "xoxp-792290012360-797753453991-3024598511548-f26433747bdb1e8b101564350c91035d",
        "xoxa-2-fcLV08RVHQKaii5b6gQ4BlPqqLvjy6",
        "sk_live_nr5nep7XZkUjRDRvvv8NieB3",
        "rk_live_x1zDocAHXVfgFPtREKF5GgEJ",
        "sk_test_Jp3pNQkaVsNI9s03e50VPNmU",
        "AIzaCkpT1kmarWbPvWFtK4z5deBVP3otsJ0igpG",
        "glpat-Ri_eA5w2ZRo-unQdaC2Q",
        "npm_rDH7qM9GPJk0ARKDbZvMSJZbiRknIEIjgLOE",
        "hf_IWja73n8NpfNbOGUw3T483oj6rMfP5qtWk",
    ),
    "JWT": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZ2VudC0xNyIsImlhdCI6MTc2NDc3MDAwMCwiZXhwIjoxNzY0NzczNjAwfQ"
        ".xOGHxB7byBvFaJuAMggS51yxIDV-kY-32cfdXbaVx-n",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwcml5YUBleGFtcGxlLmNvbSIsInJvbGUiOiJvd25lciJ9"
        ".xoFmL6jm8TMGiTjedYeulb-cTgfi7dJz54T4RmI0o-W",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5vcmciLCJhdWQiOiJ3ZWZ0Iiwic2Nv"
        "cGUiOiJtY3AifQ.Gzm3NSQGYeMPotQ1VLaRwC-OV6rqtcGCl3uQeyK5VSe",
        "eyJhbGciOiJub25lIn0.eyJ1aWQiOjQ0MTIsIndzIjoiYWNtZSJ9.",
    ),
    "CARD": (
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4242424242424242",
        "5555555555554444",
        "5105 1051 0510 5100",
        "378282246310005",
        "3782 822463 10005",
        "371449635398431",
        "6011111111111117",
        "3530111333300000",
        "4012888888881881",
        "2223003122003222",
        "30569309025904",
        "6200000000000005",
        "4222222222222",
    ),
    "IBAN": (
        "DE89 3704 0044 0532 0130 00",
        "DE89370400440532013000",
        "GB82 WEST 1234 5698 7654 32",
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91ABNA0417164300",
        "ES91 2100 0418 4502 0005 1332",
        "IT60X0542811101000000123456",
        "CH9300762011623852957",
        "BE68539007547034",
        "PL61109010140000071219812874",
    ),
    "SSN": ("078-05-1120", "123-45-6789", "219-09-9999", "457-55-5462", "536-22-8765"),
}

_KEY_BODY = (
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo"
)

HANDWRITTEN = (
    Secret(
        f"-----BEGIN RSA PRIVATE KEY-----\n{_KEY_BODY}\n-----END RSA PRIVATE KEY-----\n",
        ((_KEY_BODY[:64], "PRIVATE_KEY"),),
    ),
    Secret(
        "cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "QyNTUxOQAAACBqJ3G1cw9zKa7hYVd8pE0NnT4mC1bQ3xW2oUeL5rS9fAAAAJgxTq5vMU6u\n"
        "-----END OPENSSH PRIVATE KEY-----",
        (("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "PRIVATE_KEY"),),
    ),
    Secret(
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEF'
        'AASCBKcwggSjAgEAAoIBAQC7\\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dV\\n-----END PRIVATE KEY-----\\n"}',
        (("MIIEvQIBADANBgkqhkiG9w0BAQEF", "PRIVATE_KEY"), ("VJTUt9Us8cKjMzEfYyjiWA4R4", "PRIVATE_KEY")),
    ),
    Secret(
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oAdQ9aGfQkTeoAoGCCqGSM49\n"
        "AwEHoUQDQgAE7dZg7rW0e6sFNTqVvSJmXq4e7jWUpNuQ0tIYl2P7qVk=\n-----END EC PRIVATE KEY-----",
        (("MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oAdQ9aGfQkTeoAoGCCqGSM49", "PRIVATE_KEY"),),
    ),
    Secret(
        "pasted the key but it got cut off:\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
        "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq7yJ2nXcL0ECAggA\nMAwGCCqGSIb3DQIJBQAwFAYIKoZIhvcNAwcECP",
        (("MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq7yJ2nXcL0ECAggA", "PRIVATE_KEY"),),
    ),
    Secret(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGVxQ2EBCADKz8m3rT5vW2pL9qN4hX7jY1cF6bE0aS3dG8uI2oK5nM7tR4wQ\n"
        "=Xy9z\n-----END PGP PRIVATE KEY BLOCK-----",
        (("lQOYBGVxQ2EBCADKz8m3rT5vW2pL9qN4hX7jY1cF6bE0aS3dG8uI2oK5nM7tR4wQ", "PRIVATE_KEY"),),
    ),
    Secret(
        '  File "/home/priya/src/weft/boards/services/claim.py", line 141, in task_claim',
        (("priya", "USERNAME"),),
    ),
    Secret("/Users/jdoe/Library/Caches/pip/wheels/ab/cd", (("jdoe", "USERNAME"),)),
    Secret(r"C:\Users\Maria\AppData\Local\Temp\weft-run-17.log", (("Maria", "USERNAME"),)),
    Secret(r'{"cwd": "C:\\Users\\olek.k\\projects\\weft", "run": 17}', (("olek.k", "USERNAME"),)),
    Secret("opened C:/Users/kenji/projects/weft/README.md", (("kenji", "USERNAME"),)),
    Secret("$ cd /home/ubuntu/weft && make test", (("ubuntu", "USERNAME"),)),
    Secret(
        "ModuleNotFoundError: No module named 'weft'\n  (searched /home/sam.lee/.local/lib/python3.13/site-packages)",
        (("sam.lee", "USERNAME"),),
    ),
    Secret("rsync -av /Users/anna-maria/Desktop/export/ backup:/srv/export/", (("anna-maria", "USERNAME"),)),
    Secret(
        "DATABASE_URL=postgres://weft:s3cr3t-Pa55@db.internal:5432/weft", (("s3cr3t-Pa55", "CREDENTIALS"),)
    ),
    Secret(
        "git clone https://alice:hunter2@git.example.org/team/repo.git", (("alice:hunter2", "CREDENTIALS"),)
    ),
    Secret("REDIS_URL=redis://:Zq8wP0vB@cache.example.net:6379/0", (("Zq8wP0vB", "CREDENTIALS"),)),
    Secret("amqp://guest:guestpass99@rabbit:5672/ refused the connection", (("guestpass99", "CREDENTIALS"),)),
    Secret(
        "mongodb+srv://svc_reader:Tk3-9xL_2a@cluster0.example.mongodb.net/?retryWrites=true",
        (("svc_reader:Tk3-9xL_2a", "CREDENTIALS"),),
    ),
    Secret(
        "proxy http://bob%40corp:p%40ss-w0rd@proxy.example:3128 timed out", (("p%40ss-w0rd", "CREDENTIALS"),)
    ),
    Secret("DB_PASSWORD=Hunter2-Prod!", (("Hunter2-Prod!", "SECRET"),)),
    Secret("database:\n  host: db.internal\n  password: 'c0rrect horse'\n", (("c0rrect horse", "SECRET"),)),
    Secret('{"user": "svc", "password": "p@ss w0rd!", "port": 5432}', (("p@ss w0rd!", "SECRET"),)),
    Secret("$ ./manage.py createsuperuser --password=Sup3rS3cret", (("Sup3rS3cret", "SECRET"),)),
    Secret("secret = 'b9f8e1c0aa-77'", (("b9f8e1c0aa-77", "SECRET"),)),
    Secret("client_secret: 8Q~vJ4.kT_2mN-3pL", (("8Q~vJ4.kT_2mN-3pL", "SECRET"),)),
    Secret("GET /callback?code=abc&token=3c7d9e2f1a HTTP/1.1", (("3c7d9e2f1a", "SECRET"),)),
    Secret("PGPASSWORD=weftpass psql -h db.internal -U weft", (("weftpass", "SECRET"),)),
    Secret('api_key: "f3a9c2d4e5b6a7988776"', (("f3a9c2d4e5b6a7988776", "SECRET"),)),
    Secret("SECRET_KEY = 'django-insecure-x7#q!v2m@9kz'", (("django-insecure-x7#q!v2m@9kz", "SECRET"),)),
    Secret(
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        (("AKIAIOSFODNN7EXAMPLE", "API_KEY"), ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "SECRET")),
    ),
    Secret(
        '{"Credentials": {"AccessKeyId": "ASIA280IIB9B7MOSK55K", "SecretAccessKey": '
        '"Yo/n5GLa2hXhMbO7Q1a/HX0RssTFupW3XYw4FZoS", "SessionToken": "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJH"}}',
        (
            ("ASIA280IIB9B7MOSK55K", "API_KEY"),
            ("Yo/n5GLa2hXhMbO7Q1a/HX0RssTFupW3XYw4FZoS", "SECRET"),
            ("IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJH", "SECRET"),
        ),
    ),
    Secret(
        "export AWS_SECRET_ACCESS_KEY=yAtAS0iDuwu2pwPD7LWTbjnwlIQKUJVLmti494z/",
        (("yAtAS0iDuwu2pwPD7LWTbjnwlIQKUJVLmti494z/", "SECRET"),),
    ),
    Secret("  password: hunter22\n  username: admin", (("hunter22", "SECRET"),)),
    Secret("$config['db_password'] => 'Pa55w0rd!';", (("Pa55w0rd!", "SECRET"),)),
    Secret("X-Api-Key: 7f2c9a1b4e6d8f0a", (("7f2c9a1b4e6d8f0a", "SECRET"),)),
    Secret(
        '{"access_token": "ya29.a0AfH6SMBx3kLq9", "expires_in": 3599}', (("ya29.a0AfH6SMBx3kLq9", "SECRET"),)
    ),
    Secret("refresh_token=1//0gYx7Lm2pQ-CgYIARAAGBASNwF", (("1//0gYx7Lm2pQ-CgYIARAAGBASNwF", "SECRET"),)),
    Secret("WEBHOOK_SECRET=whsec_5f0c2a9e8b7d6c4f3e2a1b0c", (("whsec_5f0c2a9e8b7d6c4f3e2a1b0c", "SECRET"),)),
    Secret("Authorization: Basic dXNlcjpodW50ZXIy", (("dXNlcjpodW50ZXIy", "AUTH"),)),
    Secret(
        "curl -H 'Authorization: Bearer abc123def456ghi789' https://api.example.org/v1/me",
        (("abc123def456ghi789", "AUTH"),),
    ),
    Secret("> Authorization: token 9f8e7d6c5b4a39281726", (("9f8e7d6c5b4a39281726", "AUTH"),)),
    Secret(
        'headers = {"Authorization": "Bearer 0a1b2c3d4e5f60718293a4b5"}',
        (("0a1b2c3d4e5f60718293a4b5", "AUTH"),),
    ),
    Secret("retrying with Bearer 9f8e7d6c5b4a3928 after 401", (("9f8e7d6c5b4a3928", "AUTH"),)),
    Secret("AUTHORIZATION=Bearer Zm9vYmFyYmF6cXV4cXV1eDEyMw", (("Zm9vYmFyYmF6cXV4cXV1eDEyMw", "AUTH"),)),
    Secret(
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1aWQiOjQ0MTIsIndzIjoiYWNtZSJ9.jBqKLVka8jZUpsHRnczKbio6HHFnfIW7JC6ieGFwo5W",
        (("eyJ1aWQiOjQ0MTIsIndzIjoiYWNtZSJ9", "JWT"),),
    ),
    Secret(
        "Authorization: token ghp_LmyzsuIMjOws4yZrhep0FnalgJKjvXwyYIzH",
        (("ghp_LmyzsuIMjOws4yZrhep0FnalgJKjvXwyYIzH", "API_KEY"),),
    ),
    Secret(
        "export OPENAI_API_KEY=sk-proj-tfp-YLiKwP3NjO_bL9p-mH6z9LyJ681ibiBHmPV_ga8OoP1U",
        (("tfp-YLiKwP3NjO_bL9p", "API_KEY"),),
    ),
    Secret(
        "  1042  export HF_TOKEN=hf_IWja73n8NpfNbOGUw3T483oj6rMfP5qtWk",
        (("hf_IWja73n8NpfNbOGUw3T483oj6rMfP5qtWk", "API_KEY"),),
    ),
    Secret(
        "contact priya.raman@example.com or +44 20 7946 0958 about run 17",
        (("priya.raman@example.com", "EMAIL"), ("+44 20 7946 0958", "PHONE")),
    ),
    Secret(
        "2026-12-03 14:02:11,123 WARNING login failed for ana@example.org from 203.0.113.9",
        (("ana@example.org", "EMAIL"), ("203.0.113.9", "IP")),
    ),
    Secret("ssh deploy@10.0.4.17 'systemctl restart weft'", (("10.0.4.17", "IP"),)),
    Secret('upstream connect error to [2001:db8::7]:8443 (host "api.internal")', (("2001:db8::7", "IP"),)),
    Secret(
        "listening on 198.51.100.7:8443, peer 203.0.113.42:51522",
        (("198.51.100.7", "IP"), ("203.0.113.42", "IP")),
    ),
    Secret(
        "X-Forwarded-For: 203.0.113.195, 70.41.3.18, 150.172.238.178",
        (("203.0.113.195", "IP"), ("150.172.238.178", "IP")),
    ),
    Secret("charge declined: card 4242 4242 4242 4242 exp 12/29 cvc 123", (("4242 4242 4242 4242", "CARD"),)),
    Secret(
        '{"amount": 1999, "card": "5555555555554444", "order": "ORD-2026-004512"}',
        (("5555555555554444", "CARD"),),
    ),
    Secret(
        "refund to IBAN GB82 WEST 1234 5698 7654 32 (ref INV-000123)",
        (("GB82 WEST 1234 5698 7654 32", "IBAN"),),
    ),
    Secret("payee: DE89370400440532013000, amount 120.00 EUR", (("DE89370400440532013000", "IBAN"),)),
    Secret("applicant SSN 078-05-1120 on form W-4", (("078-05-1120", "SSN"),)),
    Secret(
        "call me at (415) 555-2671 or 415.555.2671 after 6pm",
        (("(415) 555-2671", "PHONE"), ("415.555.2671", "PHONE")),
    ),
    Secret(
        "Tel.: +49 30 12345678 / Fax: +49 30 12345679",
        (("+49 30 12345678", "PHONE"), ("+49 30 12345679", "PHONE")),
    ),
    Secret(
        "WhatsApp +33 6 12 34 56 78, bureau 01 23 45 67 89",
        (("+33 6 12 34 56 78", "PHONE"), ("01 23 45 67 89", "PHONE")),
    ),
    Secret(
        "mail to <maria.gonzalez@example.net>; cc: ops@example.org",
        (("maria.gonzalez@example.net", "EMAIL"), ("ops@example.org", "EMAIL")),
    ),
    Secret(
        "2026-12-03T14:02:11Z slack notify failed token=xoxb-937792993016-4921900174983-RRwpiOdTNNQHO538Fb5b8xF7",
        (("RRwpiOdTNNQHO538Fb5b8xF7", "API_KEY"),),
    ),
    Secret(
        "stripe.api_key = 'sk_live_nr5nep7XZkUjRDRvvv8NieB3'",
        (("sk_live_nr5nep7XZkUjRDRvvv8NieB3", "API_KEY"),),
    ),
    Secret(
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIzaCkpT1kmarWbPvWFtK4z5deBVP3otsJ0igpG",
        (("AIzaCkpT1kmarWbPvWFtK4z5deBVP3otsJ0igpG", "API_KEY"),),
    ),
    Secret("null byte\x00then maria@example.net\x00and more", (("maria@example.net", "EMAIL"),)),
    Secret("Ünïcödé 日本語 ログ: 連絡先 kenji@example.jp ですよ", (("kenji@example.jp", "EMAIL"),)),
)

STANDALONE_LOOKALIKES = (
    "550e8400-e29b-41d4-a716-446655440000",
    "123e4567-e89b-12d3-a456-426614174000",
    "12345678-1234-5678-1234-567812345678",
    "3f786850e387550fdab836ed7e6dc881de23001b",
    "8843d7f92416211de9ebb963ff4ce28125932878",
    "a3f9c21",
    "e83c5163316f",
    "1.2.3",
    "v2.0.0-rc.1",
    "1.2.3-beta.4+build.567",
    "version 1.2.3.4",
    "v1.2.3.4",
    "10.0.19045.3803",
    "120.0.6099.109",
    "2026-12-03T14:02:11Z",
    "2026-12-03T14:02:11.123456+00:00",
    "2026-12-03 14:02:11,123",
    "Thu, 03 Dec 2026 14:02:11 GMT",
    "1764770531",
    "1764770531123",
    "03/12/2026 14:02",
    "01.02.2026",
    "12:34:56.789",
    "#123",
    "task 42",
    "run 17",
    "run_id=98765",
    "ORD-2026-004512",
    "order 100234567",
    "INV-000123",
    "4111111111111112",
    "1234567812345678",
    "5555555555554445",
    "4111 1111 1111 1112",
    "DE89 3704 0044 0532 0130 01",
    "GB82 WEST 1234 5698 7654 33",
    "NL91ABNA0417164301",
    "000-12-3456",
    "666-45-6789",
    "123-00-4567",
    "127.0.0.1:8000",
    "0.0.0.0:8000",
    "::1",
    "256.1.1.1",
    "1.3.6.1.4.1.311",
    "00:1a:2b:3c:4d:5e",
    "HTTP/1.1 200 OK",
    "error code -32602",
    "3.14159",
    "1,234,567",
    "0x7ffd5e8c",
    "max_tokens=4096",
    "input_tokens: 523",
    "lodash@4.17.21",
    "~/projects/weft",
)

HANDWRITTEN_LOOKALIKES = (
    "  File \"/srv/weft/boards/services/runs.py\", line 212, in run_heartbeat\n    raise WeftError('lease_lost')",
    "weft 2.4.1 (build e83c516) on Python 3.13.1, Django 6.0.1",
    '{"task": 42, "run": 17, "epoch": 3, "state": "active", "lease_expires_at": "2026-12-03T14:07:11Z"}',
    "[2026-12-03 14:02:11] worker-3 claimed task #4412 (run 98231), heartbeat every 30s",
    "pip install 'django==6.0.1' 'mcp>=1.2.0' requests==2.32.3",
    "Requirement already satisfied: urllib3<3,>=1.21.1 in ./.venv/lib/python3.13/site-packages",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: CI <ci>\nDate:   Thu Dec 3 14:02:11 2026 +0000",
    "Merge: a3f9c21 e83c516",
    "token_count: 1200, tokenizer=cl100k_base, max_tokens=4096",
    "usage: input_tokens=523 output_tokens=1876 cache_read_input_tokens=0",
    "password: null",
    "token: None",
    "secret=${DB_SECRET}",
    "PASSWORD=***",
    "password_reset_url=https://example.org/reset",
    "The token expired, so the agent asked for a new one.",
    "Bearer token missing from the request",
    "Authorization header missing",
    "secret_name: prod-db",
    "keyboard=us, board=7, column=3",
    "passwordless login is on for this workspace",
    "the risk-adjusted-score-for-this-model went up",
    "desk-lamp-controller-v2 firmware",
    "ghp_short and sk-short are not keys",
    "AKIA alone is just a word",
    "eyJhbGciOiJIUzI1NiJ9 is a header with no payload",
    "@app.route('/api/v1/tasks/<int:task_id>')",
    "decorated with @property and @staticmethod",
    "user@localhost refused",
    "Listening at http://127.0.0.1:8000/ and ws://localhost:8000/ws",
    "std::vector<int> xs; std::map<std::string, int> m;",
    "arr[1::2] and arr[::-1]",
    "https://example.org/home/index.html and https://example.org/Users/list",
    "/Users/Shared/Build/weft and C:\\Users\\Public\\Documents",
    "/srv/weft/app.py /root/.cache/pip /var/log/weft/run-17.log",
    "C:\\Program Files\\Weft\\weft.exe",
    "99.9% of 1000 requests under 250 ms; p95 412 ms",
    "timezone +05:30, offset -0800, +1 retry",
    "took 1234567890 ns (epoch 1764770531)",
    "port 5432, pid 48213, exit 137",
    "OID 1.3.6.1.4.1.311.21.8 in the certificate",
    "SHA256:9f86d081884c7d659a2feaa0c55ad015 fingerprint",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "Order ORD-2026-004512 shipped, tracking 1Z999AA10123456784",
    "card ending 4242, expires 12/29",
    "ISO8601 and RFC3339 timestamps, UTF8 text",
    "task 42 -> run 17 -> issue #4412 (board 3)",
    "see https://github.com/weft/weft/pull/1234#discussion_r98765432",
    "nanoid V1StGXR8_Z5jdHi6B-myT and ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "dates 2026-01-05, 2026-02-28 and 2026-12-31",
    "phone field left empty; email field left empty",
    "Error: getaddrinfo ENOTFOUND db.internal",
    "sk_live_ and AIza prefixes are documented in docs/redaction.md",
    "x = 0123 456 (not a phone)",
    "1.2.3.4-beta and ==1.2.3.4 pins",
    "    secret = new_secret()\n    return SubscriptionCreated(subscription=subscription, secret=secret)",
    "def signature(*, secret: str, message_id: str, timestamp: int, body: str) -> str:",
    '    "webhook-signature": signature(secret=secret, message_id=message_id, timestamp=timestamp),',
    '  File "/srv/weft/hooks/delivery.py", line 71, in deliver\n    secret=job.secret,',
    'data = {"token": body["access_token"], "token_type_hint": "access_token"}',
    "token = Client().post('/o/token/', data).json()",
    "PRIVATE_KEY = _rule(\n    API_KEY = _rule(",
    "interface Login { password: string; token?: string }",
    "def _refresh(client_id: str, refresh_token: str):\n    refresh_token=refresh_token,",
    "api_key = os.environ.get('WEFT_API_KEY')",
)


def secrets() -> list[Secret]:
    """Every secret text: each standalone value in each context, then the handwritten ones."""
    placed = [
        Secret(context.format(v=value), ((value, kind),))
        for kind, values in STANDALONE.items()
        for value in values
        for context in CONTEXTS
    ]
    return placed + list(HANDWRITTEN)


def lookalikes() -> list[str]:
    """Every text that must come back byte-identical."""
    placed = [context.format(v=value) for value in STANDALONE_LOOKALIKES for context in CONTEXTS]
    return placed + list(HANDWRITTEN_LOOKALIKES)
