from .exchange import Exchange
from .submit import ExchangeSubmit
from .release_feedback import ExchangeReleaseFeedback
from .release_assignment import ExchangeReleaseAssignment
from .fetch_feedback import ExchangeFetchFeedback
from .fetch_assignment import ExchangeFetchAssignment
from .collect import ExchangeCollect
from .list import ExchangeList
from .version import __version__
from .configure_exchange import configureExchange

__all__ = [
    "Exchange",
    "ExchangeCollect",
    "ExchangeFetchAssignment",
    "ExchangeFetchFeedback",
    "ExchangeList",
    "ExchangeRelease",
    "ExchangeReleaseAssignment",
    "ExchangeReleaseFeedback",
    "configureExchange",
]
