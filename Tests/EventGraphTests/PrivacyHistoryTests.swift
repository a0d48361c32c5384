import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Erasures along seeded random histories, phones moving between people (Docs/privacy.md): the store reads what a shadow
/// of the history says — every value of a subject that is not erased, nothing of one that is
/// — and so do a replay of its log, its snapshots and its clones.
@Suite("Personal data along random histories with erasures")
struct PrivacyHistoryTests {
  /// What the history wrote, kept beside the store.
  struct Shadow {
    var lastNames: [ObjectID: String] = [:]
    var erased: Set<ObjectID> = []
    var numbers: [ObjectID: String] = [:]
    var owner: [ObjectID: ObjectID] = [:]

    var living: [ObjectID] { lastNames.keys.filter { !erased.contains($0) }.sorted() }
    /// Whether the phone's subject, its owner, is erased.
    func isErased(phone: ObjectID) -> Bool { owner[phone].map(erased.contains) ?? false }
    var phonesOfLiving: [ObjectID] { numbers.keys.filter { !isErased(phone: $0) }.sorted() }
  }

  static func text(_ rng: inout SeededGenerator) -> String { "v\(rng.next() % 100_000)" }

  /// A random history of `commits` commits: people, their phones, changes of both, phones
  /// deleted, people erased.
  static func history(_ store: EventStore, seed: UInt64, commits: Int) throws -> Shadow {
    var rng = SeededGenerator(seed: seed)
    var shadow = Shadow()
    for _ in 0..<commits {
      try store.write { tx in
        for _ in 0..<rng.int(1...3) {
          let living = shadow.living
          switch living.isEmpty ? 0 : rng.int(0...10) {
          case 0...2:
            let last = Self.text(&rng)
            let p = try tx.insert("AddressBook", ["firstName": .string("f"), "lastName": .string(last)])
            shadow.lastNames[p] = last
            if rng.chance(0.6) {
              let number = Self.text(&rng)
              let phone = try tx.insert("PhoneBook", ["phoneNumber": .string(number)])
              try tx.link(p, "phones", phone)
              shadow.numbers[phone] = number
              shadow.owner[phone] = p
            }
          case 3:
            let p = rng.pick(living)
            let number = Self.text(&rng)
            let phone = try tx.insert("PhoneBook", ["phoneNumber": .string(number)])
            try tx.link(p, "phones", phone)
            shadow.numbers[phone] = number
            shadow.owner[phone] = p
          case 4, 5:
            let p = rng.pick(living)
            let last = Self.text(&rng)
            try tx.set(p, "lastName", .string(last))
            shadow.lastNames[p] = last
          case 6, 7:
            guard !shadow.phonesOfLiving.isEmpty else { continue }
            let phone = rng.pick(shadow.phonesOfLiving)
            let number = Self.text(&rng)
            try tx.set(phone, "phoneNumber", .string(number))
            shadow.numbers[phone] = number
          case 8:
            guard !shadow.numbers.isEmpty else { continue }
            let phone = rng.pick(shadow.numbers.keys.sorted())
            try tx.delete(phone)
            shadow.numbers[phone] = nil
            shadow.owner[phone] = nil
          case 9:
            // A phone moved to another person: its number is the new person's data now.
            guard living.count > 1, !shadow.phonesOfLiving.isEmpty else { continue }
            let phone = rng.pick(shadow.phonesOfLiving)
            guard let to = living.filter({ $0 != shadow.owner[phone] }).randomElement(using: &rng) else { continue }
            try tx.link(phone, "addressBook", to)
            shadow.owner[phone] = to
          default:
            let p = rng.pick(living)
            #expect(try tx.erase(p, reason: "seed \(seed)"))
            shadow.erased.insert(p)
          }
        }
      }
    }
    return shadow
  }

  /// Whether `value` is what the shadow says of an attribute of a subject erased or not.
  static func reads(_ value: Value?, _ expected: String, erased: Bool) -> Bool {
    guard erased else { return value == .string(expected) }
    if case .sealed(let s)? = value { return s.state == .erased }
    return false
  }

  /// The store reads as the shadow says; fetches by the blind index find exactly the
  /// phones of subjects not erased.
  static func check(_ store: EventStore, _ shadow: Shadow, _ label: String) throws {
    try store.read { s in
      for (p, last) in shadow.lastNames {
        let v = try s.value(p, "lastName")
        #expect(
          Self.reads(v, last, erased: shadow.erased.contains(p)), "\(label): \(p) lastName \(String(describing: v))")
      }
      for (phone, number) in shadow.numbers {
        let erased = shadow.isErased(phone: phone)
        let v = try s.value(phone, "phoneNumber")
        #expect(Self.reads(v, number, erased: erased), "\(label): \(phone) phoneNumber \(String(describing: v))")
        let found = try s.fetch("PhoneBook", where: "phoneNumber == '\(number)'").objects
        #expect(found.contains(phone) != erased, "\(label): fetch \(number) found \(found)")
      }
    }
  }

  /// A new store of the personal address book in `dir`, with its key file beside it.
  static func store(in dir: String) throws -> EventStore {
    let key = try PrivacyTests.keyFile(in: dir)
    return try EventStore.create(
      at: dir + "/store", model: try PrivacyTests.model(), options: StoreOptions(keyFile: key))
  }

  static func export(_ store: EventStore) throws -> [String] {
    var lines: [String] = []
    try store.export { lines.append($0) }
    return lines
  }

  @Test(
    "after random histories with erasures the store, its rebuilt projections and its snapshots read what the history wrote, erased subjects erased",
    arguments: stressSeeds([11, 12, 13]))
  func randomHistories(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = try PrivacyTests.keyFile(in: dir)
    let options = StoreOptions(keyFile: key)
    let store = try EventStore.create(at: dir + "/store", model: try PrivacyTests.model(), options: options)
    let shadow = try Self.history(store, seed: seed, commits: 40)
    try Self.check(store, shadow, "seed \(seed)")
    let report = try store.verify()
    #expect(report.isOK, "seed \(seed): \(report.problems)")
    let before = try Self.export(store)
    _ = try store.rebuild()
    #expect(try Self.export(store) == before, "seed \(seed): the rebuild reads otherwise")
    try Self.check(store, shadow, "seed \(seed), rebuilt")
    for withHistory in [false, true] {
      let out = dir + "/snapshot-\(withHistory)"
      try store.snapshot(to: out, withHistory: withHistory)
      let snap = try EventStore(path: out, options: options)
      #expect(try Self.export(snap) == before, "seed \(seed): snapshot with history \(withHistory)")
      #expect(try snap.verify().isOK, "seed \(seed): snapshot with history \(withHistory)")
      try Self.check(snap, shadow, "seed \(seed), snapshot with history \(withHistory)")
    }
  }

  @Test(
    "a clone of a random person along a random history reads the original's values, erased when the original is erased",
    arguments: stressSeeds([21, 22, 23]))
  func clones(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.store(in: dir)
    var shadow = try Self.history(store, seed: seed, commits: 30)
    var rng = SeededGenerator(seed: seed ^ 0xC10E)
    for _ in 0..<4 {
      let original = rng.pick(shadow.lastNames.keys.sorted())
      let result = try store.clone(root: original)
      let copy = try #require(result.identities[original])
      let erased = shadow.erased.contains(original)
      // The copy is a subject of its own: erased exactly when its original was.
      shadow.lastNames[copy] = shadow.lastNames[original]
      if erased { shadow.erased.insert(copy) }
      for (phone, owner) in shadow.owner where owner == original {
        let phoneCopy = try #require(result.identities[phone], "seed \(seed): \(phone) was not copied")
        shadow.numbers[phoneCopy] = shadow.numbers[phone]
        shadow.owner[phoneCopy] = copy
      }
      try Self.check(store, shadow, "seed \(seed), clone of \(original)")
      // Erasing the copy leaves the original as it was.
      if !erased {
        #expect(try store.write { tx in try tx.erase(copy) }.value == true)
        shadow.erased.insert(copy)
        try Self.check(store, shadow, "seed \(seed), copy of \(original) erased")
      }
    }
    #expect(try store.verify().isOK, "seed \(seed)")
  }

  @Test("a phone inserted for a person in the commit that erases that person is erased with the person's data")
  func eraseInTheSameCommit() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.store(in: dir)
    let written = try store.write { tx in
      let p = try tx.insert("AddressBook", ["firstName": .string("f"), "lastName": .string("Gone")])
      // Held until the commit knows the phone's subject, which the link gives.
      let phone = try tx.insert("PhoneBook", ["phoneNumber": .string("555-0100")])
      try tx.link(p, "phones", phone)
      #expect(try tx.erase(p))
      return (p, phone)
    }
    let (person, phone) = try #require(written.value)
    var shadow = Shadow()
    shadow.lastNames[person] = "Gone"
    shadow.numbers[phone] = "555-0100"
    shadow.owner[phone] = person
    shadow.erased.insert(person)
    try Self.check(store, shadow, "one commit")
    #expect(try store.verify().isOK)
  }

  @Test(
    "a phone moved to another person is sealed again under the new person: erasing the old one leaves it readable, erasing the new one erases it; a move to an erased person is refused"
  )
  func movedPhone() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.store(in: dir)
    let written = try store.write { tx in
      let a = try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("A")])
      let b = try tx.insert("AddressBook", ["firstName": .string("b"), "lastName": .string("B")])
      let c = try tx.insert("AddressBook", ["firstName": .string("c"), "lastName": .string("C")])
      let phone = try tx.insert("PhoneBook", ["phoneNumber": .string("555-0199")])
      try tx.link(a, "phones", phone)
      return (a, b, c, phone)
    }
    let (a, b, c, phone) = try #require(written.value)
    try store.write { tx in try tx.link(phone, "addressBook", b) }
    func subject() throws -> ObjectID? {
      try store.read { s in
        if case .sealed(let sealed)? = try s.reader.object(phone)?[PropertyID(rawValue: 0)] { return sealed.subject }
        return nil
      }
    }
    #expect(try subject() == b)
    _ = try store.write { tx in try tx.erase(a) }
    #expect(try store.read { try $0.value(phone, "phoneNumber") } == .string("555-0199"))
    _ = try store.write { tx in try tx.erase(c) }
    #expect(throws: StoreError.self) { try store.write { tx in try tx.link(phone, "addressBook", c) } }
    _ = try store.write { tx in try tx.erase(b) }
    guard case .sealed(let v)? = try store.read({ try $0.value(phone, "phoneNumber") }) else {
      Issue.record("the moved phone's number was opened after its new person's erasure")
      return
    }
    #expect(v.state == .erased)
    #expect(try store.verify().isOK)
  }

  @Test(
    "history with erasures truncated at a random cut reads the same, rebuilds the same, and erases on after the cut",
    arguments: stressSeeds([31, 32, 33]))
  func truncated(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.store(in: dir)
    var shadow = try Self.history(store, seed: seed, commits: 40)
    var rng = SeededGenerator(seed: seed ^ 0x7C07)
    let before = try Self.export(store)
    try store.truncate(.keepCommits(rng.int(0...20)))
    #expect(try Self.export(store) == before, "seed \(seed): the truncation reads otherwise")
    try Self.check(store, shadow, "seed \(seed), truncated")
    let report = try store.verify()
    #expect(report.isOK, "seed \(seed): \(report.problems)")
    _ = try store.rebuild()
    #expect(try Self.export(store) == before, "seed \(seed): the rebuild after the cut reads otherwise")
    try Self.check(store, shadow, "seed \(seed), truncated and rebuilt")
    if let p = shadow.living.first {
      #expect(try store.write { tx in try tx.erase(p) }.value == true)
      shadow.erased.insert(p)
      try Self.check(store, shadow, "seed \(seed), erased after the cut")
    }
  }
}
