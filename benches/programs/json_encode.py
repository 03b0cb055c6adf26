import json
def main():
    rows = [{"id": i, "name": "item-" + str(i), "score": i * 0.5, "tags": ["a", "b"]} for i in range(N)]
    return len(json.dumps(rows, separators=(",", ":"), sort_keys=True))
