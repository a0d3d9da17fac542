from app.util import Mailer, send


def run(argv):
    send("started", timeout=5)
    mailer = Mailer("localhost")
    return mailer.deliver("ops", "done", urgent=True)
