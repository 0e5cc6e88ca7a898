"""`manage.py train_generator ...` runs `python -m generation train ...` (same options)."""

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Fine-tune a causal LM into the Polyjuice format (see `python -m generation train -h`)."

    def add_arguments(self, parser):
        parser.add_argument(
            "arguments",
            nargs="*",
            help="Options for `python -m generation train`, as they are or after `--`.",
        )

    def run_from_argv(self, argv):
        # Everything after the command name goes to the generation CLI untouched, but for
        # a leading `--`, which only separates this command's name from the options.
        from generation.cli import main

        arguments = argv[2:]
        if arguments[:1] == ["--"]:
            arguments = arguments[1:]
        status = main(["train", *arguments])
        if status:
            raise SystemExit(status)

    def handle(self, *args, **options):
        raise CommandError("Run as `manage.py train_generator --pairs FILE --output DIR ...`.")
