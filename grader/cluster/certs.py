"""The grading cluster's certificates: `python -m grader certs [--out build/tls] [--hosts ...]`.

Every connection in the cluster is mutual TLS (Dask's `distributed.Security`): each end shows a
certificate signed by the course's own CA, and a peer without one cannot connect, join or
submit work. One folder holds them:

    ca.pem                              the CA's certificate: every machine checks peers against it
    scheduler.pem, scheduler.key        python -m grader scheduler
    worker.pem, worker.key              python -m grader worker
    client.pem, client.key              python -m grader grade --scheduler tls://...

The CA's private key is never written: nothing can sign another certificate later, and making a
new folder (a new CA) retires every old certificate at once. Dask checks the chain, not host
names (its TLS contexts turn hostname checking off, since clusters are usually reached by IP
address), so `hosts` only go into the scheduler certificate's names for other tools to read.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from grader import REPO
from grader.i18n import _

FOLDER = REPO / "build" / "tls"  # every command's default: build/ is never committed
ROLES = ("scheduler", "worker", "client")
VALID_DAYS = 730


def paths(folder: Path, role: str) -> tuple[Path, Path, Path]:
    """(CA certificate, the role's certificate, its key)."""
    return folder / "ca.pem", folder / f"{role}.pem", folder / f"{role}.key"


def make(folder: Path, hosts: list[str] = ()) -> None:
    """A new CA and one certificate per role, signed by it, in `folder` (which must not hold any)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder)
    if (folder / "ca.pem").exists():
        raise FileExistsError(
            _("{folder} already holds certificates: remove the folder to make a new CA").format(folder=folder)
        )
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def builder(subject: str, issuer: str, key) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(name(issuer))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))  # a machine whose clock is a little behind
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        builder("ch04 grading cluster CA", "ch04 grading cluster CA", ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.DNSName(f"ch04-{role}")]
        for host in hosts if role == "scheduler" else ():
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        cert = (
            builder(f"ch04 grading {role}", "ch04 grading cluster CA", key)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            # every role both listens and connects (the scheduler calls workers, workers call each other)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_path, key_path = paths(folder, role)[1:]
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        # created 0600, never readable by others even for a moment
        with os.fdopen(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            handle.write(pem)
