import EventGraph
import EventGraphLocking
import Foundation
import Testing

@testable import EventGraphMigration

/// Bad input to an upcast: each a clear error, the store still usable at its old version,
/// nothing lost (and, for what can be checked before starting, nothing written).
@Suite("Upcast refusals and failures")
struct BadInputTests {
  /// The seed's mapping file with one piece of text replaced.
  struct BadMapping: Sendable, CustomStringConvertible {
    var description: String
    var replace: String
    var with: String
    /// Text the error must contain (besides the file's name).
    var names: [String]
  }

  static let badMappings: [BadMapping] = [
    BadMapping(
      description: "an unknown source entity", replace: #""source": "AddressBook", "destination": "PhoneBook""#,
      with: #""source": "AdressBook", "destination": "PhoneBook""#, names: ["AddressBookToPhoneBook", "AdressBook"]),
    BadMapping(
      description: "an unknown destination entity", replace: #""destination": "PhoneBook""#,
      with: #""destination": "PhoneBok""#, names: ["AddressBookToPhoneBook", "PhoneBok"]),
    BadMapping(
      description: "an unknown destination attribute", replace: #""phoneNumber": "$source.phone1""#,
      with: #""phoneNumbr": "$source.phone1""#, names: ["AddressBookToPhoneBook", "phoneNumbr"]),
    BadMapping(
      description: "an unknown source attribute in an expression", replace: #""phoneNumber": "$source.phone2""#,
      with: #""phoneNumber": "$source.phone3""#, names: ["AddressBookToPhoneBook", "phone3"]),
    BadMapping(
      description: "an unknown mapping in a relationship mapping", replace: #""mapping": "AddressBookToPhoneBook""#,
      with: #""mapping": "AddressBookToPhone""#, names: ["AddressBookToAddressBook", "phones", "AddressBookToPhone"]),
    BadMapping(
      description: "an unknown destination relationship", replace: #""relationships": {"phones""#,
      with: #""relationships": {"fones""#, names: ["AddressBookToAddressBook", "fones"]),
    BadMapping(
      description: "a filter that does not type-check", replace: #""filter": "phone1 != nil || phone2 != nil""#,
      with: #""filter": "phone1 > 3""#, names: ["AddressBookToPhoneBook", "filter", "phone1 > 3"]),
    BadMapping(
      description: "a `when` that does not parse", replace: #""when": "phone2 != nil AND phone2 != ''""#,
      with: #""when": "phone2 != nil AND""#, names: ["AddressBookToPhoneBook", "instances[1]"]),
    BadMapping(
      description: "a string expression for an int16 attribute", replace: #""type": "2""#,
      with: #""type": "$source.phone2""#, names: ["AddressBookToPhoneBook", "type"]),
    BadMapping(
      description: "a policy that is not registered", replace: #""filter": "phone1 != nil || phone2 != nil","#,
      with: #""filter": "phone1 != nil || phone2 != nil", "policy": "PhoneSplitter","#,
      names: ["PhoneSplitter", "not registered"]),
    BadMapping(
      description: "a mapping from another version", replace: #""source": 1,"#, with: #""source": 3,"#,
      names: ["version 3"]),
    BadMapping(
      description: "an unknown key", replace: #""filter": "phone1"#, with: #""filtr": "phone1"#, names: ["filtr"]),
    BadMapping(
      description: "a mapping declared twice", replace: #""name": "AddressBookToPhoneBook""#,
      with: #""name": "AddressBookToAddressBook""#, names: ["AddressBookToAddressBook", "twice"]),
    BadMapping(
      description: "an instance that leaves a required attribute without a value",
      replace: #""attributes": {"phoneNumber": "$source.phone2", "type": "2"}"#, with: #""attributes": {"type": "2"}"#,
      names: ["instances[1]", "phoneNumber"]),
  ]

  /// A v1 store with a random history; returns its export.
  func makeStore(_ path: String, seed: UInt64 = 77) throws -> [String] {
    let store = try EventStore.create(at: path, model: try Examples.v1())
    try Histories.addressBook(store, seed: seed, commits: 20)
    return try exportLines(store)
  }

  /// The store is at v1, has all its data, takes a new commit, and a good upcast works.
  func expectUsable(_ path: String, export: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 1, sourceLocation: sourceLocation)
      #expect(try exportLines(store) == export, sourceLocation: sourceLocation)
      #expect(try store.verify().isOK, sourceLocation: sourceLocation)
      try store.write { tx in
        _ = try tx.insert(
          "AddressBook", ["firstName": .string("金"), "lastName": .string("太郎"), "phone2": .string("9")])
      }
    }
    let (report, _) = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    #expect(report.switched, sourceLocation: sourceLocation)
    #expect(
      try EventStore(path: path).read { try $0.objects(of: "AddressBook").count } == export.count + 1,
      sourceLocation: sourceLocation)
  }

  @Test("a mapping that does not fit the models is refused before anything is written", arguments: badMappings)
  func badMapping(_ bad: BadMapping) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let export = try makeStore(path)
    let text = String(
      decoding: try #require(FileManager.default.contents(atPath: Examples.root + "/AddressBook.v1-v2.mapping.json")),
      as: UTF8.self)
    let broken = text.replacingOccurrences(of: bad.replace, with: bad.with)
    #expect(broken != text, "the case's text is not in the mapping file")
    let before = try dumpEverything(at: path)
    var registry = PolicyRegistry()
    registry.register(AddressBookToPhoneBook(), as: "AddressBookToPhoneBook")
    let error = try #require(throws: MappingError.self) {
      _ = try EventStore.upcast(
        at: path, to: try Examples.v2(), mapping: try mapping(broken), policies: registry,
        mappingFile: "inline.mapping.json")
    }
    #expect(error.description.contains("inline.mapping.json"), "\(error)")
    for name in bad.names { #expect(error.description.contains(name), "\(error) does not name \(name)") }
    #expect(try dumpEverything(at: path) == before, "the refusal wrote something")
    try expectUsable(path, export: export)
  }

  @Test("a destination model whose version is not greater is refused")
  func versionNotGreater() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    // A store at version 2, asked to go to version 1.
    do {
      let store = try EventStore.create(at: path, model: try Examples.v2())
      try store.write { tx in _ = try tx.insert("AddressBook", ["firstName": .string("桃"), "lastName": .string("太郎")]) }
    }
    let export = try exportLines(at: path)
    let before = try dumpEverything(at: path)
    let inferred = try #require(throws: MappingError.self) {
      _ = try EventStore.upcast(at: path, to: try Examples.v1(), mapping: nil)
    }
    #expect(inferred.description.contains("not greater"), "\(inferred)")
    let written = try #require(throws: MappingError.self) {
      _ = try EventStore.upcast(at: path, to: try Examples.v1(), mapping: MappingModel(source: 2, destination: 1))
    }
    #expect(written.description.contains("not greater"), "\(written)")
    #expect(try dumpEverything(at: path) == before)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(try exportLines(store) == export)
  }

  @Test("a store already at the target version is refused")
  func alreadyAtTarget() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    _ = try makeStore(path)
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    let export = try exportLines(at: path)
    let before = try dumpEverything(at: path)
    let error = try #require(throws: MigrationError.self) {
      _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    }
    #expect(error.description.contains("already at version 2"), "\(error)")
    #expect(throws: MigrationError.self) { _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: nil) }
    #expect(try dumpEverything(at: path) == before)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(try exportLines(store) == export)
  }

  // MARK: - A policy that throws halfway

  struct Oops: Error, CustomStringConvertible {
    var description: String { "the phone directory is on fire" }
  }

  /// The seed's policy, failing in endInstanceCreation of the `failAt`-th source commit
  /// (after that commit's destination objects were made).
  struct FailingPolicy: MigrationPolicy {
    let commits = Counter()
    var failAt: Int?

    func begin(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws { commits.increment() }

    func createDestinationInstances(for source: SourceObject, mapping: CompiledEntityMapping, manager: MigrationManager)
      throws
    {
      try AddressBookToPhoneBook().createDestinationInstances(for: source, mapping: mapping, manager: manager)
    }

    func endInstanceCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
      if commits.value == failAt { throw Oops() }
    }
  }

  final class Counter: Sendable {
    private let n = Locked(0)
    func increment() { n.withLock { $0 += 1 } }
    var value: Int { n.withLock { $0 } }
  }

  static func registry(_ policy: FailingPolicy) -> PolicyRegistry {
    var r = PolicyRegistry()
    r.register(policy, as: "AddressBookToPhoneBook")
    return r
  }

  @Test("a policy that throws on the 3rd source commit: a clear error, v1 intact, a later upcast succeeds")
  func policyThrowsHalfway() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let export = try makeStore(path)
    let v1Bytes = try dumpDatabases(at: path, versionDatabases(1))
    let error = try #require(throws: MigrationError.self) {
      _ = try EventStore.upcast(
        at: path, to: try Examples.v2(), mapping: try policyMapping(), policies: Self.registry(FailingPolicy(failAt: 3))
      )
    }
    #expect(error.description.contains("source commit 3"), "\(error)")
    #expect(error.description.contains("AddressBookToPhoneBook"), "\(error)")
    #expect(error.description.contains("endInstanceCreation"), "\(error)")
    #expect(error.description.contains("the phone directory is on fire"), "\(error)")
    #expect(try dumpDatabases(at: path, versionDatabases(1)) == v1Bytes)
    #expect(throws: MigrationError.self) { try EventStore.rollback(at: path, to: 2) }
    try expectUsable(path, export: export)
  }

  @Test("after a policy failure with some batches written, the fixed policy resumes to the uninterrupted bytes")
  func policyThrowsAfterCheckpoints() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let twin = dir + "/twin"
    let export = try makeStore(path)
    _ = try makeStore(twin)
    let v1Bytes = try dumpDatabases(at: path, versionDatabases(1))
    let commits = try EventStore(path: path).read { try $0.commits().count }
    do {
      let store = try EventStore(path: path)
      let compiled = try CompiledMapping(
        try policyMapping(), from: store.model, to: try Examples.v2(), policies: Self.registry(FailingPolicy(failAt: 3))
      )
      let upcaster = try Upcaster(store: store, mapping: compiled)
      upcaster.batchEvents = 1  // one source commit a batch: commits 1 and 2 are checkpointed
      #expect(throws: MigrationError.self) { _ = try upcaster.run() }
    }
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 1)
      #expect(try exportLines(store) == export)
      #expect(try dumpDatabases(store, versionDatabases(1)) == v1Bytes)
    }
    // The same mapping with the policy fixed: resumes after commit 2 and ends as a clean run.
    let fixed = Self.registry(FailingPolicy(failAt: nil))
    let report = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try policyMapping(), policies: fixed)
      .report
    #expect(report.resumed)
    #expect(report.commitsRead == commits - 2)
    _ = try EventStore.upcast(at: twin, to: try Examples.v2(), mapping: try policyMapping(), policies: fixed)
    #expect(try dumpDatabases(at: path, versionDatabases(2)) == dumpDatabases(at: twin, versionDatabases(2)))
  }
}
