import json
# Encode records as JSON, decode them back, and read fields.
def main():
    records = [{"id": i, "name": "item-" + str(i), "price": i * 0.25, "tags": ["a", "b%d" % (i % 5)],
                "meta": {"owner": "user%d" % (i % 9), "ok": i % 2 == 0}} for i in range(N)]
    text = json.dumps(records, separators=(",", ":"), sort_keys=True)
    back = json.loads(text)
    owners = {}
    for r in back:
        owners[r["meta"]["owner"]] = owners.get(r["meta"]["owner"], 0) + len(r["tags"])
    return {"bytes": len(text), "owners": owners, "last": back[-1]["name"]}
