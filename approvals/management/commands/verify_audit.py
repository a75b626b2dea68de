from django.core.management.base import BaseCommand, CommandError

from approvals import audit, audit_chain


class Command(BaseCommand):
    help = ("Walk every audit chain (or --chain NAME ...) and check each row's hash, sequence and link. "
            "Exits 0 on an intact log, 1 naming the first broken row.")

    def add_arguments(self, parser):
        parser.add_argument("--chain", action="append", dest="chains", metavar="NAME",
                            help="Verify only this chain (repeatable), e.g. session:<uuid> or global.")

    def handle(self, *args, chains=None, **options):
        report = audit_chain.verify(chains)
        audit.record(audit.Kind.VERIFY, actor_system=audit.command("verify_audit"),
                     decision="intact" if report.intact else "broken", data=audit_chain.report_details(report))
        if not report.intact:
            raise CommandError(f"audit log BROKEN at {report.broken} ({report.rows} rows read)", returncode=1)
        self.stdout.write(f"audit log intact: {report.rows} rows in {report.chains} chains; "
                          f"digest {report.digest}")
