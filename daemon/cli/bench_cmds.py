COMMANDS = ("bench ingest", "bench recall")
def register(sub, common): pass
