import Foundation

// MARK: - Compacting and backing up a store

extension BadInput {
  static let maintenanceCases: [BadInput] =
    compactCases + backupCases + truncateCases + rekeyCases + reportCases + groupCases

  static let groupCases: [BadInput] = [
    bad(2, ["consumers"], ["STORE"]),
    bad(2, ["consumers", "@S", "extra"], ["extra"]),
    bad(1, ["consumers", "@D/nowhere"], ["@D/nowhere", "no such file"]),
    bad(2, ["parked", "@S"], ["GROUP"]),
    bad(1, ["parked", "@S", "a:b"], ["'a:b'", "no ':'"]),
    bad(2, ["parked", "@S", "mail", "--retry", "x"], ["--retry", "'x'"]),
    bad(2, ["parked", "@S", "mail", "--retry", "3", "--skip", "3"], ["two changes: give one"]),
    bad(1, ["parked", "@S", "mail", "--skip", "3"], ["group 'mail'", "no commit at sequence 3"]),
    bad(1, ["parked", "@S", "mail", "--retry", "3"], ["@S/data.mdb", "permission denied"], access: .readOnlyStore),
  ]

  static let compactCases: [BadInput] = [
    bad(2, ["compact"], ["STORE"]),
    bad(2, ["compact", "@S", "extra"], ["extra"]),
    bad(1, ["compact", "@D/nowhere"], ["@D/nowhere", "no such file"]),
    bad(1, ["compact", "@D/empty"], ["@D/empty", "not an EventGraph store"], files: ["empty": .directory]),
    bad(2, ["compact", "@S", "--drop-versions-before", "x"], ["--drop-versions-before", "'x'"]),
    bad(2, ["compact", "@S", "--drop-versions-before"], ["--drop-versions-before"]),
    // The book fixture is at version 2 alone: dropping below 3 would drop the active one.
    bad(1, ["compact", "@S", "--drop-versions-before", "3"], ["version 2", "the active one", "nothing was changed"]),
    bad(2, ["compact", "@S", "--drop-rollback"], ["--drop-rollback"]),
  ]

  static let backupCases: [BadInput] = [
    bad(2, ["backup", "@S"], ["DIR"]),
    bad(2, ["backup"], ["STORE"]),
    bad(1, ["backup", "@D/nowhere", "@D/b"], ["@D/nowhere", "no such file"], absent: ["@D/b"]),
    bad(1, ["backup", "@S", "@D/file"], ["@D/file", "not an empty directory"], files: ["file": .text("x")]),
    bad(
      1, ["backup", "@S", "@D/full"], ["@D/full", "not an empty directory"],
      files: ["full": .directory, "full/x": .text("x")]),
    bad(1, ["backup", "@S", "@D/no/such/b"], ["@D/no/such/b", "no such file"], absent: ["@D/no"]),
    bad(2, ["backup", "@S", "@D/b", "--compact=yes"], ["--compact"], absent: ["@D/b"]),
  ]

  static let truncateCases: [BadInput] = [
    bad(2, ["truncate"], ["STORE"]),
    bad(2, ["truncate", "@S", "--older-than", "5x"], ["--older-than", "'5x'", "a duration"]),
    bad(2, ["truncate", "@S", "--older-than", "90"], ["--older-than", "'90'"]),
    bad(2, ["truncate", "@S", "--keep-commits", "-3"], ["--keep-commits", "0 or more"]),
    bad(2, ["truncate", "@S", "--before", "-1"], ["--before", "'-1'"]),
    bad(2, ["truncate", "@S", "--older-than", "90d", "--keep-commits", "3"], ["three cuts: give one"]),
    bad(1, ["truncate", "@S", "--before", "0"], ["@S", "before sequence 0", "sequences start at 1"]),
    bad(1, ["truncate", "@S", "--before", "99999"], ["@S", "before sequence 99999", "beyond the end of the log"]),
    bad(1, ["truncate", "@S", "--before", "2"], ["@S", "before sequence 2", "inside commit 1", "between commits"]),
    bad(1, ["truncate", "@S"], ["@S", "no retention policy", "--keep-commits"]),
    bad(1, ["truncate", "@S", "--keep-commits", "0"], ["@S/data.mdb", "permission denied"], access: .readOnlyStore),
    bad(2, ["retention", "@S", "--keep", "soon"], ["--keep", "'soon'"]),
    bad(2, ["retention", "@S", "--keep", "1d", "--off"], ["three policies: give one"]),
    bad(2, ["retention", "@S", "--keep-commits", "-1"], ["--keep-commits", "0 or more"]),
    bad(1, ["retention", "@S", "--keep", "1d"], ["@S/data.mdb", "permission denied"], access: .readOnlyStore),
  ]

  static let rekeyCases: [BadInput] = [
    bad(2, ["rekey"], ["STORE"]),
    bad(2, ["rekey", "@S", "--key-file", "@D/k"], ["--new-key-file", "eventtool keygen"]),
    bad(2, ["rekey", "@S", "--new-key-file", "@D/n"], ["--key-file", "EVENTGRAPH_KEY_FILE"]),
    bad(1, ["rekey", "@D/nowhere", "--key-file", "@D/k", "--new-key-file", "@D/n"], ["@D/nowhere", "no such file"]),
    bad(1, ["rekey", "@S", "--key-file", "@D/k", "--new-key-file", "@D/n"], ["@S", "@D/n", "does not exist"]),
    bad(
      1, ["rekey", "@S", "--key-file", "@D/k", "--new-key-file", "@D/short.key"],
      ["@D/short.key", "3 bytes long", "exactly 32 bytes"], files: ["short.key": .text("abc")]),
  ]

  static let reportCases: [BadInput] = [
    bad(2, ["report", "@S"], ["--out FILE"]),
    bad(
      1, ["report", "@S", "--out", "@D/r.html", "--nats", "nats://127.0.0.1:1"],
      ["no NATS server answers at nats://127.0.0.1:1"], absent: ["@D/r.html"]),
    bad(
      2, ["report", "@S", "--out", "@D/r.html", "--max-size", "5"], ["--max-size", "1000 bytes or more"],
      absent: ["@D/r.html"]),
    bad(
      2, ["report", "@S", "--out", "@D/r.html", "--max-history", "0"], ["--max-history", "1 or more"],
      absent: ["@D/r.html"]),
    bad(
      1, ["report", "@S", "--out", "@D/r.html", "--object", "AddressBook/999"], ["AddressBook/999"],
      absent: ["@D/r.html"]),
    bad(
      1, ["report", "@D/bad", "--out", "@D/r.html"], ["@D/bad", "not an EventGraph store", "not an LMDB file"],
      files: ["bad": .directory, "bad/data.mdb": .bytes(Array(repeating: 0x5A, count: 20_000))], absent: ["@D/r.html"]),
    bad(1, ["report", "@S", "--out", "@D/no/such/r.html"], ["cannot write @D/no/such/r.html"], absent: ["@D/no"]),
  ]
}
