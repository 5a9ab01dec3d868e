async def run(ctx, **kw):
    pass
