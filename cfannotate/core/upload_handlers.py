"""An upload handler that keeps at most the size limit of an uploaded file, on disk.

Django writes every uploaded file to disk whole before a view sees it. With
`LimitedUploadHandler` the bytes past the limit are counted and dropped as they
arrive, so a 2 GB upload costs neither memory nor disk, and the view can still
say how large the file was. Views opt in with `@limit_uploads` (HTML) or
`LimitedUploadMixin` (DRF); the handlers must be set before anything reads the
request body, which is why the CSRF check moves inside (Django's documented way).

A request may also carry several files under one name, of which Django keeps the last;
`one_upload` (pages), `OneFileFormField` (forms) and `OneFileField` (API) refuse it instead
of dropping the others.
"""

from collections.abc import Callable
from functools import wraps

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from rest_framework import serializers

from cfannotate.core.exceptions import InvalidInput


class OversizedUpload(UploadedFile):
    """What a file over the limit leaves in request.FILES: its name and size, no content."""

    def __init__(self, name: str, size: int, content_type: str | None = None) -> None:
        super().__init__(file=None, name=name, content_type=content_type, size=size)

    def read(self, *args, **kwargs) -> bytes:
        raise ValueError(f"{self.name} was over the upload limit; its content was not kept.")


class LimitedUploadHandler(TemporaryFileUploadHandler):
    def __init__(self, request: HttpRequest | None = None, *, max_bytes: int) -> None:
        super().__init__(request)
        self.max_bytes = max_bytes
        self.received = 0

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.received += len(raw_data)
        if self.received <= self.max_bytes:
            self.file.write(raw_data)
        elif not self.file.closed:
            self.file.close()  # a temporary file: closing deletes it

    def file_complete(self, file_size: int) -> UploadedFile:
        if self.received > self.max_bytes:
            return OversizedUpload(self.file_name, file_size, self.content_type)
        return super().file_complete(file_size)


def limited_handlers(request: HttpRequest) -> list[LimitedUploadHandler]:
    return [LimitedUploadHandler(request, max_bytes=settings.UPLOAD_MAX_BYTES)]


def limit_uploads(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a function view so that its uploads stop being kept at UPLOAD_MAX_BYTES."""
    protected = csrf_protect(view)

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        request.upload_handlers = limited_handlers(request)
        return protected(request, *args, **kwargs)

    return wrapper


class LimitedUploadMixin:
    """For DRF APIViews: the same handlers, set on the request before DRF parses it."""

    def initialize_request(self, request: HttpRequest, *args, **kwargs):
        request.upload_handlers = limited_handlers(request)
        return super().initialize_request(request, *args, **kwargs)


def _several_files(count: int) -> str:
    return f"Send one file at a time; this request has {count}, and only one would be read."


def one_upload(files, name: str = "file") -> UploadedFile | None:
    """The file uploaded as `name`, or None; InvalidInput when there are several."""
    uploads = files.getlist(name)
    if len(uploads) > 1:
        raise InvalidInput(_several_files(len(uploads)), fields={name: ["One file at a time."]})
    return uploads[0] if uploads else None


class OneFileField(serializers.FileField):
    """A serializer's file, refused when the request carries several under its name."""

    def get_value(self, dictionary):
        uploads = dictionary.getlist(self.field_name) if hasattr(dictionary, "getlist") else []
        return uploads if len(uploads) > 1 else super().get_value(dictionary)

    def to_internal_value(self, data):
        if isinstance(data, list):
            raise serializers.ValidationError(_several_files(len(data)))
        return super().to_internal_value(data)


class _OneFileInput(forms.ClearableFileInput):
    """Hands the field every file sent under its name, so that several can be refused
    (Django's widget keeps the last one without a word)."""

    def value_from_datadict(self, data, files, name):
        uploads = files.getlist(name) if hasattr(files, "getlist") else []
        return uploads if len(uploads) > 1 else super().value_from_datadict(data, files, name)


class OneFileFormField(forms.FileField):
    """A form's file, refused when the request carries several under its name."""

    widget = _OneFileInput

    def to_python(self, data):
        if isinstance(data, list):
            raise ValidationError(_several_files(len(data)), code="several")
        return super().to_python(data)
