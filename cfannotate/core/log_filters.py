"""Filters of the log handler (settings.LOGGING)."""

import logging


class QuietBelow(logging.Filter):
    """Drops the records of one logger (and its children) below a level, whatever level
    that logger is set to: `manage.py db_worker` sets the task loggers to INFO when it
    starts, so a logger level in the settings cannot quiet them."""

    def __init__(self, logger: str, level: str) -> None:
        super().__init__()
        self.logger = logger
        self.level = logging.getLevelNamesMapping()[level]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == self.logger or record.name.startswith(self.logger + "."):
            return record.levelno >= self.level
        return True
