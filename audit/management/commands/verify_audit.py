from django.core.management.base import BaseCommand, CommandError

from audit import chain as audit_chain
from audit import checkpoints as audit_checkpoints
from audit import trail as audit

SHOWN_FINDINGS = 20


class Command(BaseCommand):
    help = (
        "Walk every audit chain (or --chain NAME ...) and check each row's hash, sequence and link; with "
        "--checkpoints FILE, also check the log against the signed chain heads audit_checkpoint wrote. "
        "Exits 0 on an intact log, 1 naming the first broken row and every checkpoint finding."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--chain",
            action="append",
            dest="chains",
            metavar="NAME",
            help="Verify only this chain (repeatable), e.g. session:<uuid> or global.",
        )
        parser.add_argument(
            "--checkpoints", metavar="FILE", help="A file of checkpoints (audit_checkpoint); needs CONDOR_AUDIT_KEY."
        )

    def handle(self, *args, chains=None, checkpoints=None, **options):
        findings = []
        if checkpoints:
            try:
                lines, findings = audit_checkpoints.check(checkpoints)
            except audit_checkpoints.CheckpointRefused as refused:
                raise CommandError(str(refused)) from None
        report = audit_chain.verify(chains)
        details = audit_chain.report_details(report)
        if checkpoints:
            details["checkpoints"] = audit_checkpoints.checkpoint_details(checkpoints, lines, findings)
        intact = report.intact and not findings
        audit.record(
            audit.Kind.VERIFY,
            actor_system=audit.command("verify_audit"),
            decision="intact" if intact else "broken",
            data=details,
        )
        if intact:
            against = f"; {lines} checkpoints hold" if checkpoints else ""
            self.stdout.write(
                f"audit log intact: {report.rows} rows in {report.chains} chains{against}; digest {report.digest}"
            )
            return
        problems = [] if report.intact else [f"audit log BROKEN at {report.broken} ({report.rows} rows read)"]
        problems += [f"checkpoints: {finding}" for finding in findings[:SHOWN_FINDINGS]]
        if len(findings) > SHOWN_FINDINGS:
            problems.append(f"checkpoints: … and {len(findings) - SHOWN_FINDINGS} more")
        raise CommandError("\n".join(problems), returncode=1)
