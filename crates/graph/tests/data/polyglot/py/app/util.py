import time


def send(message, *, retries=3, timeout=None):
    """Sends a message, retrying."""
    for _ in range(retries):
        time.sleep(0)
    return message


class Mailer:
    def __init__(self, host):
        self.host = host

    @staticmethod
    def deliver(to, body, *, urgent=False):
        return send(body, retries=1 if urgent else 3)
