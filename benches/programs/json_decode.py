import json
TEXT = json.dumps([{"id": i, "name": "item-" + str(i), "score": i * 0.5, "tags": ["a", "b"]} for i in range(N)], separators=(",", ":"), sort_keys=True)
def main():
    return len(json.loads(TEXT))
