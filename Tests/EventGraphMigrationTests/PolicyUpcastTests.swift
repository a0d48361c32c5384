import EventGraph
import Foundation
import Testing

@testable import EventGraphMigration

/// The seed's `AddressBookToPhoneBook` custom policy, nearly line for line.
///
/// For each source person, one PhoneBook per phone, associated with the person so that the `phones`
/// relationship mapping finds them. Its `createRelationships` prints what the seed's NSLog
/// printed, to show the inverse `addressBook` is already set by then.
struct AddressBookToPhoneBook: MigrationPolicy {
  var log: Recorder? = nil

  func begin(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
    log?.record("begin")
  }

  func createDestinationInstances(for source: SourceObject, mapping: CompiledEntityMapping, manager: MigrationManager)
    throws
  {
    log?.record("createDestinationInstances #\(source.id.rawValue)")
    for (attribute, type) in [("phone1", 1), ("phone2", 2)] {
      // NSString *sPhone1 = [sInstance valueForKey:@"phone1"];
      guard let number = try manager.value(of: source, attribute)?.stringValue, !number.isEmpty else { continue }
      // NSManagedObject *dPhone1 = [NSEntityDescription insertNewObjectForEntityForName:@"PhoneBook" …];
      let phone = try manager.insertDestination("PhoneBook", key: attribute)
      // [dPhone1 setValue:sPhone1 forKey:@"phoneNumber"];
      try manager.set(phone, "phoneNumber", .string(number))
      try manager.set(phone, "type", .int16(Int16(type)))
      // [manager associateSourceInstance:sInstance withDestinationInstance:dPhone1 forEntityMapping:mapping];
      manager.associate(source: source, destination: phone, mapping: mapping)
    }
  }

  func endInstanceCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
    log?.record("endInstanceCreation")
  }

  func createRelationships(for destination: ObjectID, mapping: CompiledEntityMapping, manager: MigrationManager) throws
  {
    try manager.createDefaultRelationships(for: destination, mapping: mapping)
    // NSLog(@"%@ %@ :Tel %@", dInstance.addressBook.firstName, …lastName, dInstance.phoneNumber);
    let d = manager.destination
    let owner = try d.related(destination, "addressBook").first
    let first = try owner.flatMap { try d.value($0, "firstName")?.stringValue } ?? "(no addressBook yet)"
    let last = try owner.flatMap { try d.value($0, "lastName")?.stringValue } ?? ""
    // The manager's associations, both ways: the person this phone was made from, and back.
    let sources = try manager.sourceInstances(mapping: mapping.name, destination: destination)
    let back = try manager.destinationInstances(mapping: mapping.name, sources: sources)
    let from =
      sources.map { "#\($0.id.rawValue)" }.joined(separator: ",")
      + (back.contains(destination) ? "" : " (not associated back)")
    log?.record(
      "createRelationships \(first) \(last) :Tel \(try d.value(destination, "phoneNumber")?.stringValue ?? "?") from \(from)"
    )
  }

  func endRelationshipCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
    log?.record("endRelationshipCreation")
  }

  func performCustomValidation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
    log?.record("performCustomValidation")
  }

  func end(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {
    log?.record("end")
  }
}

/// The seed's mapping with the split done by the Swift policy instead of `instances`.
func policyMapping() throws -> MappingModel {
  try mapping(
    """
    {"source": 1, "destination": 2, "entityMappings": [
      {"name": "AddressBookToAddressBook", "source": "AddressBook", "destination": "AddressBook",
       "relationships": {"phones": {"mapping": "AddressBookToPhoneBook", "sources": "$source"}}},
      {"name": "AddressBookToPhoneBook", "source": "AddressBook", "destination": "PhoneBook",
       "filter": "phone1 != nil || phone2 != nil", "policy": "AddressBookToPhoneBook"}
    ]}
    """)
}

@Suite("The seed's phone split by a Swift migration policy")
struct PolicyUpcastTests {
  @Test("gives the same result as the declarative mapping, stage by stage in the documented order")
  func seedPolicy() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let ids = try seedStore(path)
    let policyLog = Recorder()
    let stages = Recorder()
    var registry = PolicyRegistry()
    registry.register(AddressBookToPhoneBook(log: policyLog), as: "AddressBookToPhoneBook")
    do {
      let store = try EventStore(path: path)
      let compiled = try CompiledMapping(
        try policyMapping(), from: store.model, to: try Examples.v2(), policies: registry)
      let upcaster = try Upcaster(store: store, mapping: compiled)
      upcaster.onStage = { stages.record($0) }
      let report = try upcaster.run()
      #expect(report.switched)
      #expect(report.commitsRead == 3 && report.commitsWritten == 3)
    }

    // The result: the declarative test's.
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(try phoneList(store) == ["桃 太郎 :Tel 090-111-9999", "桃 太郎 :Tel 123-4567-7891", "浦島 太郎 :Tel 090-1234-5678"])
    try store.read { s throws in
      for id in ids.values { #expect(try s.entity(of: id).name == "AddressBook") }
      #expect(try s.related(try #require(ids["issun"]), "phones").isEmpty)
      let momo = try #require(ids["momo"])
      let phones = try s.related(momo, "phones")
      #expect(Set(try phones.map { try s.value($0, "type") }) == [.int16(1), .int16(2)])
      for p in phones { #expect(try s.related(p, "addressBook") == [momo]) }
      let urashima = try s.related(try #require(ids["urashima"]), "phones")
      #expect(try urashima.map { try s.value($0, "type") } == [.int16(2)])
    }
    #expect(try store.verify().isOK)

    // The declarative mapping on an identical store gives the same export.
    let twin = dir + "/twin"
    _ = try seedStore(twin)
    _ = try EventStore.upcast(at: twin, to: try Examples.v2(), mapping: try Examples.mapping())
    #expect(try canonicalForm(exportLines(store)) == canonicalForm(exportLines(at: twin)))

    // Every stage, for every mapping, in the documented order, once per source commit.
    let a = "AddressBookToAddressBook"
    let p = "AddressBookToPhoneBook"
    func commit(phones: Int) -> [String] {
      ["begin \(a)", "begin \(p)", "createDestinationInstances \(a)"]
        + (phones > 0 ? ["createDestinationInstances \(p)"] : [])
        + ["endInstanceCreation \(a)", "endInstanceCreation \(p)", "createRelationships \(a)"]
        + Array(repeating: "createRelationships \(p)", count: phones)
        + [
          "endRelationshipCreation \(a)", "endRelationshipCreation \(p)", "performCustomValidation \(a)",
          "performCustomValidation \(p)", "end \(a)", "end \(p)",
        ]
    }
    let recorded = stages.all.filter { !$0.hasPrefix("reconcile ") }
    #expect(recorded == commit(phones: 2) + commit(phones: 1) + commit(phones: 0))

    // What the policy itself saw: the inverse addressBook already set in createRelationships,
    // as the seed's author observed.
    let tail = ["endRelationshipCreation", "performCustomValidation", "end"]
    let momo = ids["momo"]?.rawValue ?? 0
    let urashima = ids["urashima"]?.rawValue ?? 0
    #expect(
      policyLog.all == [
        "begin", "createDestinationInstances #\(momo)", "endInstanceCreation",
        "createRelationships 桃 太郎 :Tel 123-4567-7891 from #\(momo)",
        "createRelationships 桃 太郎 :Tel 090-111-9999 from #\(momo)",
      ] + tail + [
        "begin", "createDestinationInstances #\(urashima)", "endInstanceCreation",
        "createRelationships 浦島 太郎 :Tel 090-1234-5678 from #\(urashima)",
      ] + tail + ["begin", "endInstanceCreation"] + tail)
  }

  @Test("a later change of phone1 updates the policy's PhoneBook, and nil deletes it")
  func stableIdentitiesOfSplitObjects() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    _ = try seedStore(path, thenSet: "momo", [("phone1", .string("111")), ("phone1", nil), ("phone1", .string("222"))])
    var registry = PolicyRegistry()
    registry.register(AddressBookToPhoneBook(), as: "AddressBookToPhoneBook")
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try policyMapping(), policies: registry)
    let store = try EventStore(path: path)
    let commits = try store.read { try $0.commits() }
    #expect(commits.count == 6)
    // Commit 4 (phone1 = "111") sets the landline's number rather than making a new one.
    let fourth = commits[3]
    #expect(!fourth.events.contains { if case .insert = $0 { true } else { false } }, "\(fourth.events)")
    #expect(fourth.events.contains { if case .set = $0 { true } else { false } })
    // Commit 5 (phone1 = nil) deletes it; commit 6 makes a new one.
    #expect(commits[4].events.contains { if case .delete = $0 { true } else { false } })
    #expect(commits[5].events.contains { if case .insert = $0 { true } else { false } })
    #expect(try phoneList(store) == ["桃 太郎 :Tel 090-111-9999", "桃 太郎 :Tel 222", "浦島 太郎 :Tel 090-1234-5678"])
  }
}

@Suite("An upcast runs only the mappings a commit can have changed")
struct MappingSkipTests {
  @Test("a commit that sets phone1 runs the phone split but not the person mapping, whose values it cannot change")
  func setOfPhoneSkipsPersonMapping() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let ids = try seedStore(
      path, thenSet: "momo",
      [
        ("phone1", .string("111")),  // changes a PhoneBook
        ("phone1", nil),  // deletes it: phones changes
        ("firstName", .string("桃の")),  // the person only
      ])
    let momo = try #require(ids["momo"])
    let stages = Recorder()
    do {
      let store = try EventStore(path: path)
      let compiled = try CompiledMapping(try Examples.mapping(), from: store.model, to: try Examples.v2())
      let upcaster = try Upcaster(store: store, mapping: compiled)
      upcaster.onStage = { stages.record($0) }
      #expect(try upcaster.run().commitsRead == 6)
    }
    let a = "AddressBookToAddressBook"
    let p = "AddressBookToPhoneBook"
    // The stages that ran per source commit, begin/end markers left out.
    var perCommit: [[String]] = []
    for s in stages.all {
      if s == "begin \(a)" { perCommit.append([]) }
      if s.hasPrefix("createDestinationInstances ") || s.hasPrefix("createRelationships ") {
        perCommit[perCommit.count - 1].append(s)
      }
    }
    let everything = ["createDestinationInstances \(a)", "createDestinationInstances \(p)", "createRelationships \(a)"]
    #expect(perCommit.count == 6)
    #expect(
      perCommit[0...2].allSatisfy { $0 == everything || $0 == Array(everything.prefix(1)) + everything.suffix(1) })
    #expect(perCommit[3] == ["createDestinationInstances \(p)"])
    #expect(perCommit[4] == ["createDestinationInstances \(p)", "createRelationships \(a)"])
    #expect(perCommit[5] == ["createDestinationInstances \(a)"])

    // And the result is still the mapping of the final state.
    let store = try EventStore(path: path)
    try store.read { s throws in
      #expect(try s.value(momo, "firstName") == .string("桃の"))
      #expect(try s.related(momo, "phones").map { try s.value($0, "phoneNumber") } == [.string("090-111-9999")])
    }
    #expect(try store.verify().isOK)
  }
}
