import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("eventtool rekey, killed with SIGKILL")
struct RekeyKillTests {
  /// The wrapped keys in the store's subject-key file.
  static func wrappedKeys(_ path: String) -> Set<Data> {
    guard let bytes = FileManager.default.contents(atPath: path + "/subject-keys") else { return [] }
    var found: Set<Data> = []
    var offset = 64
    while offset + 128 <= bytes.count {
      let slot = bytes.subdata(in: offset..<(offset + 128))
      if slot.contains(where: { $0 != 0 }) { found.insert(slot.subdata(in: 16..<88)) }
      offset += 128
    }
    return found
  }

  /// The offset of the first of `needles` (72 bytes each) in `haystack`: each offset's
  /// first 8 bytes looked up among the needles' first 8, so a file is read once.
  static func firstMatch(of needles: Set<Data>, in haystack: Data) -> Int? {
    var byPrefix: [UInt64: [Data]] = [:]
    for n in needles { byPrefix[Self.prefix(n, at: n.startIndex), default: []].append(n) }
    guard haystack.count >= 72 else { return nil }
    for i in 0...(haystack.count - 72) {
      guard let candidates = byPrefix[Self.prefix(haystack, at: haystack.startIndex + i)] else { continue }
      let window = haystack.subdata(in: (haystack.startIndex + i)..<(haystack.startIndex + i + 72))
      if candidates.contains(window) { return i }
    }
    return nil
  }

  private static func prefix(_ d: Data, at start: Int) -> UInt64 {
    var v: UInt64 = 0
    for j in 0..<8 { v = v << 8 | UInt64(d[start + j]) }
    return v
  }

  /// Whether `key` opens the store read-only, as a reader finds it before any writer.
  static func opens(_ path: String, _ key: String) -> Bool {
    (try? EventStore(path: path, options: StoreOptions(readOnly: true, keyFile: key))) != nil
  }

  @Test(
    "rekey killed at random moments: exactly one of the old and the new key opens the store, every value reads as before, and no file keeps a key wrapped under an earlier key"
  )
  func killedAtRandom() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    var current = dir + "/key-0"
    try EventStore.generateKeyFile(at: current)
    let count = 2_000
    let people: [ObjectID] = try {
      let store = try EventStore.create(
        at: path, model: try EraseKillTests.model(), options: StoreOptions(keyFile: current))
      let people = try #require(
        try store.write { tx in
          try (0..<count).map { i in
            try tx.insert("Person", ["name": .string("Secret \(i)"), "nick": .string("n\(i)")])
          }
        }.value)
      for p in people.prefix(10) { _ = try store.write { tx in try tx.erase(p) } }
      return people
    }()
    var earlier = Self.wrappedKeys(path)
    var g = SeededGenerator(seed: 2612)
    var whole = 20
    var (kills, rotated, kept) = (0, 0, 0)
    for i in 1...16 {
      let next = dir + "/key-\(i)"
      try EventStore.generateKeyFile(at: next)
      let run = Process()
      run.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
      run.arguments = ["rekey", path, "--key-file", current, "--new-key-file", next]
      run.standardOutput = FileHandle.nullDevice
      run.standardError = FileHandle.nullDevice
      let began = Date()
      try run.run()
      // Every fourth run goes uninterrupted and its time becomes the span the next kills
      // are drawn from, so the kills follow the machine's speed instead of assuming one.
      if i % 4 != 0 {
        usleep(UInt32(g.int(0...whole * 6 / 5)) * 1000)
        if run.isRunning {
          kill(run.processIdentifier, SIGKILL)
          kills += 1
        }
      }
      run.waitUntilExit()
      if i % 4 == 0 {
        #expect(run.terminationStatus == 0)
        whole = max(2, Int(Date().timeIntervalSince(began) * 1000))
      }
      let (old, new) = (Self.opens(path, current), Self.opens(path, next))
      #expect(old != new, "run \(i): the old key opens: \(old), the new one: \(new)")
      let key = new ? next : current
      if new { rotated += 1 } else { kept += 1 }
      try EventStore(path: path, options: StoreOptions(readOnly: true, keyFile: key)).read { s in
        for (j, p) in people.enumerated() {
          let name = try s.value(p, "name")
          if j < 10 {
            guard case .sealed(let v)? = name, v.state == .erased else {
              Issue.record("run \(i): the erased Person/\(p.rawValue) reads \(String(describing: name))")
              return
            }
          } else if name != .string("Secret \(j)") {
            Issue.record("run \(i): Person/\(p.rawValue) reads \(String(describing: name))")
            return
          }
        }
      }
      // A writable open finishes a rotation that was committed.
      _ = try EventStore(path: path, options: StoreOptions(keyFile: key))
      #expect(!FileManager.default.fileExists(atPath: path + "/" + Keyring.rotationFileName), "run \(i)")
      let now = Self.wrappedKeys(path)
      if new {
        #expect(now.isDisjoint(with: earlier), "run \(i): a key wrapped under an earlier key is still in the file")
        earlier.formUnion(now)
        current = next
      }
    }
    #expect(kills > 0)
    // No file of the store holds a key wrapped under any key but the last.
    let gone = earlier.subtracting(Self.wrappedKeys(path))
    for name in FileManager.default.enumerator(atPath: path)?.compactMap({ $0 as? String }) ?? [] {
      guard let bytes = FileManager.default.contents(atPath: path + "/" + name) else { continue }
      #expect(Self.firstMatch(of: gone, in: bytes) == nil, "\(name) holds a key wrapped under an earlier key")
    }
    print("rekey kills (a whole run \(whole) ms): \(kills) killed, \(rotated) rotated, \(kept) kept the old key")
  }

  @Test("rekey --json reports the subjects wrapped again and the erased ones; show then needs the new key")
  func json() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    let (old, new) = (dir + "/old.key", dir + "/new.key")
    try EventStore.generateKeyFile(at: old)
    try EventStore.generateKeyFile(at: new)
    let people: [ObjectID] = try {
      let store = try EventStore.create(
        at: path, model: try EraseKillTests.model(), options: StoreOptions(keyFile: old))
      let people = try #require(
        try store.write { tx in try (0..<3).map { i in try tx.insert("Person", ["name": .string("Secret \(i)")]) } }
          .value)
      _ = try store.write { tx in try tx.erase(people[0]) }
      return people
    }()
    let r = try ToolRunner.eventtool(["rekey", path, "--key-file", old, "--new-key-file", new, "--json"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("\"subjects\": 2,") && r.out.contains("\"erased\": 1,"), "\(r.out)")
    let refused = try ToolRunner.eventtool(["show", path, "Person/\(people[1].rawValue)", "--key-file", old])
    #expect(refused.status == 1 && refused.err.contains(old), "\(refused.err)")
    let shown = try ToolRunner.eventtool(["show", path, "Person/\(people[1].rawValue)", "--key-file", new])
    #expect(shown.status == 0 && shown.out.contains("Secret 1"), "\(shown.out)\(shown.err)")
  }
}
