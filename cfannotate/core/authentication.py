"""The API's token authentication, refusing an address that keeps sending bad tokens."""

from rest_framework.authentication import get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from cfannotate.core.api_tokens import ApiTokenAuthentication
from cfannotate.core.throttles import TOKEN_FAILURES, RateLimited, client_address


class RateLimitedTokenAuthentication(ApiTokenAuthentication):
    """`Authorization: Token <key>` (checked by digest), failed keys counted per address.

    Past TOKEN_FAILURE_RATE the address gets 429 before its key is even looked up, so
    guessing keys stops there, a right guess included. Requests without a token header
    pass untouched to the next authentication class.
    """

    def authenticate(self, request):
        words = get_authorization_header(request).split()
        if not words or words[0].lower() != self.keyword.lower().encode():
            return None
        address = client_address(request)
        wait = TOKEN_FAILURES.wait_seconds(address)
        if wait:
            raise RateLimited(wait, "Too many bad API tokens from this address")
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            TOKEN_FAILURES.record_failure(address)
            raise
