#!/usr/bin/env python3
"""The third-party files test/t/060_openbench_worker.pl runs, and their hashes.

    openbench_fixtures.py check DIR        one line per file missing or not as
                                           pinned; exit 1 if there is any
    openbench_fixtures.py tree-hash ZIP    a zip's content hash (below)
    openbench_fixtures.py extract-client ZIP DEST
                                           OpenBench's Client/ folder, from
                                           its repository's zip, into DEST

A zip is identified by what it holds, not by its bytes, since a forge may
pack the same tree differently from one download to the next: its content
hash is the SHA-256 of the lines "SHA-256  PATH" of its files (PATH without
the zip's top folder), sorted by PATH.  scripts/fetch_openbench.sh fetches
these files; scripts/test.sh checks them before the test runs.
"""
import hashlib
import os
import sys
import zipfile

# OpenBench's worker at AndyGrant/OpenBench 9906bad18e04 (client version 49).
CLIENT = {
    '__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'bench.py': 'f1df6bd38641e8682f40bc1cf9a9e21a2d63474c0771701376e54d2947f3ae24',
    'cleanup.sh': '9a1a8acd3df3b192e64e3992fc011c172b97e1c7d7c04862634819bbc61f1b28',
    'client.py': 'e42855b3ccb145c680a6b56291778061450b574a96f36e96ee2b350e4be79a8a',
    'genfens.py': 'fa2df804c408498dc4536ee7187125f145177ca03e7d9d99f4e17eb90ea2d45b',
    'isa_detector.py': 'bf12fbd9e76e9136822652efdb4f9f797264e6b67248dbec3bae5012b3a334a3',
    'pgn_util.py': 'ce2b0596f022c22bebd28cbdeb6665dd216bfb8a832dfb55480e7f136d54d99b',
    'requirements.txt': 'e272c459c64228b30c19c2ee4881d5f098578df96be28fa335fe9802c09c9366',
    'utils.py': '48fc65bf037eb03a439f51e13bbc5edc8fe0301e340811216070e3e0c0fd4fe7',
    'worker.py': '36a06c17458bc9c1f49475416cbe55100653a3324d1b9fc5228d2aa6e32689d9',
}
# fastchess at AndyGrant/fastchess 1525c4b17e00, weiss at two commits.
ZIPS = {
    'fastchess-1525c4b.zip': '31860abfe64b2d49eeef9aa98ee5f599d4a9663b5c97ebcdddc8c664fc6e5976',
    'weiss-60c513742276cc6696e0615a06a10016bcdd0e6d.zip':
        '8d0d60afe367b1439ec1004f4bfcf14c80f58ca41e43ebd8483709395e4a9689',
    'weiss-3ca09c28f533590d6bb7de67281f82ba9f6adedd.zip':
        '689deb350616d350c2ba9a89976bbf46ef0eb0b2211f6a07f12338eb04139ee2',
}


def without_top(name):
    return name.split('/', 1)[1] if '/' in name else name


def tree_hash(path):
    lines = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.is_dir():
                digest = hashlib.sha256(z.read(info)).hexdigest()
                lines.append((without_top(info.filename), digest))
    listing = ''.join('%s  %s\n' % (d, n) for n, d in sorted(lines))
    return hashlib.sha256(listing.encode()).hexdigest()


def file_hash(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def problems(top):
    for name, want in sorted(CLIENT.items()):
        path = os.path.join(top, 'Client', name)
        if not os.path.isfile(path):
            yield 'missing: Client/%s' % name
        elif file_hash(path) != want:
            yield 'not the pinned file: Client/%s' % name
    for name, want in sorted(ZIPS.items()):
        path = os.path.join(top, name)
        if not os.path.isfile(path):
            yield 'missing: %s' % name
        else:
            try:
                ok = tree_hash(path) == want
            except zipfile.BadZipFile:
                ok = False
            if not ok:
                yield 'not the pinned tree: %s' % name


def extract_client(path, dest):
    os.makedirs(dest, exist_ok=True)
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            rest = without_top(info.filename)
            if info.is_dir() or not rest.startswith('Client/') or rest.count('/') != 1:
                continue
            with open(os.path.join(dest, rest.split('/', 1)[1]), 'wb') as f:
                f.write(z.read(info))


def main(argv):
    if len(argv) == 3 and argv[1] == 'check':
        found = list(problems(argv[2]))
        for line in found:
            print(line)
        return 1 if found else 0
    if len(argv) == 3 and argv[1] == 'tree-hash':
        print(tree_hash(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == 'extract-client':
        extract_client(argv[2], argv[3])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
