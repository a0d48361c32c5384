import Foundation
import LMDB
import Testing

@testable import EventGraph

@Suite("The store: commits, projections and inverses")
struct StoreTests {
  @Test("the seed's address book keeps the inverse on both sides")
  func addressBookInverse() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    let (momo, phone) = try store.write { tx throws in
      let momo = try tx.insert("AddressBook", ["firstName": .string("桃"), "lastName": .string("太郎")])
      let phone = try tx.insert("PhoneBook", ["phoneNumber": .string("123-4567-7891"), "type": .int64(1)])
      try tx.link(momo, "phones", phone)
      return (momo, phone)
    }.value!
    try store.read { s throws in
      #expect(try s.related(momo, "phones") == [phone])
      #expect(try s.related(phone, "addressBook") == [momo])
      #expect(try s.value(phone, "type") == .int16(1))
      #expect(try s.value(momo, "firstName") == .string("桃"))
    }
    // Setting the to-one side moves the phone: the first person loses it.
    let urashima = try store.write { tx throws in
      let u = try tx.insert("AddressBook", ["firstName": .string("浦島"), "lastName": .string("太郎")])
      try tx.setRelationship(phone, "addressBook", to: u)
      return u
    }.value!
    try store.read { s throws in
      #expect(try s.related(momo, "phones").isEmpty)
      #expect(try s.related(urashima, "phones") == [phone])
      #expect(try s.related(phone, "addressBook") == [urashima])
    }
    #expect(try store.verify().isOK)
  }

  @Test("the log records inserts, defaults, links and the unlink of a move")
  func eventsOfAMove() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    let model = store.model
    let book = try #require(model.entity(named: "AddressBook"))
    let phones = try #require(book.relationship(named: "phones"))
    let (a, b, p) = try store.write { tx throws in
      (
        try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("x")]),
        try tx.insert("AddressBook", ["firstName": .string("b"), "lastName": .string("y")]),
        try tx.insert("PhoneBook", ["phoneNumber": .string("1")])
      )
    }.value!
    try store.write { tx throws in try tx.link(a, "phones", p) }
    try store.write { tx throws in try tx.link(b, "phones", p) }
    let commits = try store.read { try $0.commits() }
    #expect(commits.count == 3)
    #expect(commits.map(\.number) == [1, 2, 3])
    // PhoneBook.type has a default: the insert is followed by a set of it.
    let type = try #require(model.entity(named: "PhoneBook")?.attribute(named: "type"))
    #expect(commits[0].events.contains(.set(p, attribute: type.id, value: .int16(0))))
    let inverse = try #require(phones.inverse)
    #expect(
      commits[2].events == [
        .unlink(p, relationship: inverse, target: a),
        .link(b, relationship: phones.id, target: p, position: nil),
      ])
    #expect(commits[1].firstSequence == commits[0].lastSequence + 1)
  }

  @Test("an ordered to-many keeps its order through inserts, moves and removals")
  func orderedToMany() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let (acme, people) = try store.write { tx throws in
      let c = try tx.insert("Company", ["name": .string("ACME")])
      var people: [ObjectID] = []
      for i in 0..<5 {
        let e = try tx.insert("Employee", ["name": .string("e\(i)")])
        try tx.link(c, "employees", e)
        people.append(e)
      }
      return (c, people)
    }.value!
    var expected = people
    try store.read { s throws in #expect(try s.related(acme, "employees") == expected) }
    let newcomer = try store.write { tx throws in
      let n = try tx.insert("Employee", ["name": .string("new")])
      try tx.link(acme, "employees", n, at: 2)
      try tx.link(acme, "employees", people[4], at: 0)  // a move
      try tx.unlink(acme, "employees", people[1])
      return n
    }.value!
    expected = [people[4], people[0], newcomer, people[2], people[3]]
    try store.read { s throws in
      #expect(try s.related(acme, "employees") == expected)
      #expect(try s.related(people[1], "company").isEmpty)
      #expect(try s.related(newcomer, "company") == [acme])
    }
    try store.write { tx throws in try tx.setRelationship(acme, "employees", to: [people[3], people[4]]) }
    try store.read { s throws in #expect(try s.related(acme, "employees") == [people[3], people[4]]) }
    #expect(try store.verify().isOK)
  }

  @Test("a position outside the ordered relationship is refused")
  func badPosition() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    #expect(throws: StoreError.self) {
      try store.write { tx throws in
        let c = try tx.insert("Company", ["name": .string("ACME")])
        let e = try tx.insert("Employee", ["name": .string("e")])
        try tx.link(c, "employees", e, at: 3)
      }
    }
    try store.read { s throws in #expect(try s.objects(of: "Company").isEmpty) }
  }

  @Test("cascade deletes the targets, nullify only unlinks")
  func cascadeAndNullify() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    let (a, p1, p2) = try store.write { tx throws in
      let a = try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("b")])
      let p1 = try tx.insert("PhoneBook", ["phoneNumber": .string("1")])
      let p2 = try tx.insert("PhoneBook", ["phoneNumber": .string("2")])
      try tx.link(a, "phones", p1)
      try tx.link(a, "phones", p2)
      return (a, p1, p2)
    }.value!
    // nullify: deleting a phone leaves the person with the other one.
    try store.write { tx throws in try tx.delete(p1) }
    try store.read { s throws in
      #expect(try s.object(p1) == nil)
      #expect(try s.related(a, "phones") == [p2])
    }
    // cascade: deleting the person deletes the remaining phone.
    try store.write { tx throws in try tx.delete(a) }
    try store.read { s throws in
      #expect(try s.object(a) == nil)
      #expect(try s.object(p2) == nil)
      #expect(try s.objects(of: "PhoneBook").isEmpty)
    }
    #expect(try store.verify().isOK)
  }

  @Test("deny refuses the delete while related, and allows it once empty")
  func denyRule() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let (dept, e) = try store.write { tx throws in
      let d = try tx.insert("Department", ["name": .string("R&D")])
      let e = try tx.insert("Employee", ["name": .string("e")])
      try tx.link(e, "department", d)
      return (d, e)
    }.value!
    let before = try store.read { try $0.logEnd() }
    #expect {
      try store.write { tx throws in try tx.delete(dept) }
    } throws: { error in
      guard let e = error as? StoreError, e.code == .validation else { return false }
      return e.object == "Department/\(dept.rawValue)" && e.property == "employees"
    }
    try store.read { s throws in
      #expect(try s.logEnd() == before)
      #expect(try s.object(dept) != nil)
    }
    try store.write { tx throws in
      try tx.delete(e)
      try tx.delete(dept)
    }
    try store.read { s throws in #expect(try s.object(dept) == nil) }
  }

  @Test("noAction removes the links so no reference dangles")
  func noActionRule() throws {
    let model = try Model(
      name: "N", version: 1,
      entities: [
        EntityDescription(
          name: "A",
          relationships: [
            RelationshipDescription(name: "bs", destination: "B", isToMany: true, inverse: "a", deleteRule: .noAction)
          ]),
        EntityDescription(
          name: "B", relationships: [RelationshipDescription(name: "a", destination: "A", inverse: "bs")]),
      ])
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let (a, b) = try store.write { tx throws in
      let a = try tx.insert("A")
      let b = try tx.insert("B")
      try tx.link(a, "bs", b)
      return (a, b)
    }.value!
    try store.write { tx throws in try tx.delete(a) }
    try store.read { s throws in
      #expect(try s.object(b) != nil)
      #expect(try s.related(b, "a").isEmpty)
    }
    #expect(try store.verify().isOK)
  }

  @Test("a relationship without an inverse is unlinked when its target is deleted")
  func noInverse() throws {
    let model = try Model(
      name: "N", version: 1,
      entities: [
        EntityDescription(name: "Note", relationships: [RelationshipDescription(name: "about", destination: "Thing")]),
        EntityDescription(name: "Thing"),
      ])
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let (n, t) = try store.write { tx throws in
      let n = try tx.insert("Note")
      let t = try tx.insert("Thing")
      try tx.link(n, "about", t)
      return (n, t)
    }.value!
    try store.write { tx throws in try tx.delete(t) }
    try store.read { s throws in #expect(try s.related(n, "about").isEmpty) }
    #expect(try store.verify().isOK)
  }

  @Test("deleting without rules removes the object's links, in and out, and nothing else, as a nullify delete would")
  func deleteIgnoringRules() throws {
    // `cascade` from the person to its phones, `deny` from a department, an ordered list,
    // and a link without an inverse pointing at the person.
    let model = try Model(
      name: "R", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          relationships: [
            RelationshipDescription(
              name: "phones", destination: "Phone", isToMany: true, isOrdered: true, inverse: "owner",
              deleteRule: .cascade),
            RelationshipDescription(name: "team", destination: "Team", inverse: "members", deleteRule: .deny),
          ]),
        EntityDescription(
          name: "Phone",
          relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "phones")]
        ),
        EntityDescription(
          name: "Team",
          relationships: [
            RelationshipDescription(name: "members", destination: "Person", isToMany: true, inverse: "team")
          ]),
        EntityDescription(name: "Note", relationships: [RelationshipDescription(name: "about", destination: "Person")]),
      ])
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let (person, phones, team, note) = try store.write { tx throws in
      let person = try tx.insert("Person")
      let phones = try (0..<3).map { _ in try tx.insert("Phone") }
      for p in phones.reversed() { try tx.link(person, "phones", p, at: 0) }
      let team = try tx.insert("Team")
      try tx.link(person, "team", team)
      let note = try tx.insert("Note")
      try tx.link(note, "about", person)
      return (person, phones, team, note)
    }.value!
    let commit = try store.write { tx throws in try tx.deleteIgnoringRules(person) }.commit
    let first = try #require(commit).firstSequence
    let events = try store.read { s throws in try s.commits(from: first).first?.events ?? [] }
    let phonesID = try #require(model.entity(named: "Person")?.propertyID(named: "phones"))
    let teamID = try #require(model.entity(named: "Person")?.propertyID(named: "team"))
    let aboutID = try #require(model.entity(named: "Note")?.propertyID(named: "about"))
    // Relationship by relationship (each in its own order), then the links without an
    // inverse, then the delete: what a delete with nullify rules emits.
    #expect(
      events
        == phones.map { Event.unlink(person, relationship: phonesID, target: $0) } + [
          .unlink(person, relationship: teamID, target: team), .unlink(note, relationship: aboutID, target: person),
          .delete(person),
        ])
    try store.read { s throws in
      #expect(try s.object(person) == nil)
      for p in phones {
        #expect(try s.object(p) != nil)  // no cascade
        #expect(try s.related(p, "owner").isEmpty)
      }
      #expect(try s.related(team, "members").isEmpty)  // no deny
      #expect(try s.related(note, "about").isEmpty)
    }
    #expect(try store.verify().isOK)
  }

  @Test("a refused commit leaves log and state unchanged")
  func refusedCommit() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    try store.write { tx throws in
      _ = try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("b")])
    }
    let before = try store.read { (try $0.logEnd(), try $0.objects(of: "AddressBook")) }
    // Missing required lastName: refused at commit, naming the object and property.
    #expect {
      try store.write { tx throws in _ = try tx.insert("AddressBook", ["firstName": .string("only")]) }
    } throws: { error in
      guard let e = error as? StoreError, e.code == .validation else { return false }
      // An object of the refused commit is named by its insert: its identity goes to the next.
      return e.object?.entity == "AddressBook" && e.object?.origin == .inserted(1) && e.property == "lastName"
        && e.description.hasPrefix("new AddressBook 1 of the commit.lastName: ")
    }
    // A wrong type is refused at once.
    #expect(throws: StoreError.self) {
      try store.write { tx throws in
        let p = try tx.insert("PhoneBook", ["phoneNumber": .string("1")])
        try tx.set(p, "type", .string("mobile"))
      }
    }
    // A closure that throws leaves nothing either.
    struct Oops: Error {}
    #expect(throws: Oops.self) {
      try store.write { tx throws in
        _ = try tx.insert("AddressBook", ["firstName": .string("x"), "lastName": .string("y")])
        throw Oops()
      }
    }
    let after = try store.read { (try $0.logEnd(), try $0.objects(of: "AddressBook")) }
    #expect(after.0 == before.0)
    #expect(after.1 == before.1)
    #expect(try store.verify().isOK)
  }

  @Test("an int16 out of range is a type error, not a trap")
  func outOfRange() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    #expect {
      try store.write { tx throws in
        _ = try tx.insert("PhoneBook", ["phoneNumber": .string("1"), "type": .int64(70_000)])
      }
    } throws: { error in
      guard let e = error as? StoreError, e.code == .wrongType else { return false }
      return e.property == "type" && e.detail?.contains("70000") == true
    }
  }

  @Test("reopening a store sees everything committed, with its own model")
  func reopen() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    var id = ObjectID(0)
    do {
      let store = try EventStore.create(at: path, model: try Fixtures.company())
      id = try store.write { tx throws in try tx.insert("Company", ["name": .string("ACME")]) }.value!
    }
    let again = try EventStore(path: path)
    #expect(again.model == (try Fixtures.company()))
    try again.read { s throws in #expect(try s.value(id, "name") == .string("ACME")) }
  }

  @Test("a directory that is not a store is refused with a clear error")
  func notAStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect {
      _ = try EventStore(path: dir)
    } throws: { error in
      guard let e = error as? StoreError, e.code == .notAStore else { return false }
      return e.path == dir
    }
    _ = FileManager.default.createFile(atPath: dir + "/data.mdb", contents: Data(repeating: 7, count: 8192))
    #expect(throws: StoreError.self) { _ = try EventStore(path: dir) }
  }

  @Test("time travel gives an object's values and links as of a past sequence")
  func timeTravel() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    let a = try store.write { tx throws in
      try tx.insert("AddressBook", ["firstName": .string("v1"), "lastName": .string("l")])
    }
    let p = try store.write { tx throws in
      let p = try tx.insert("PhoneBook", ["phoneNumber": .string("1")])
      try tx.link(a.value!, "phones", p)
      try tx.set(a.value!, "firstName", .string("v2"))
      return p
    }
    let del = try store.write { tx throws in try tx.delete(a.value!) }
    let model = store.model
    let first = try #require(model.entity(named: "AddressBook")?.attribute(named: "firstName")).id
    let phones = try #require(model.entity(named: "AddressBook")?.relationship(named: "phones")).id
    try store.read { s throws in
      let aSeq = try #require(a.commit).lastSequence
      let pSeq = try #require(p.commit).lastSequence
      let delSeq = try #require(del.commit).lastSequence
      let v1 = try #require(try s.object(a.value!, asOf: aSeq))
      #expect(v1.state[first] == .string("v1"))
      #expect(v1.relationships[phones] == nil)
      let v2 = try #require(try s.object(a.value!, asOf: pSeq))
      #expect(v2.state[first] == .string("v2"))
      #expect(v2.relationships[phones] == [p.value!])
      #expect(try s.object(a.value!, asOf: delSeq) == nil)
      #expect(try s.object(a.value!, asOf: 0) == nil)
      // After the log's end the answer is unknown, not "did not exist".
      #expect(throws: StoreError.sequenceBeyondLog(delSeq + 1, last: delSeq)) {
        try s.object(a.value!, asOf: delSeq + 1)
      }
    }
  }

  @Test("the map grows instead of failing when it is full")
  func mapGrows() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/s", model: try Fixtures.addressBookV2(), options: StoreOptions(initialMapSize: 1 << 20))
    let big = String(repeating: "x", count: 4000)
    for batch in 0..<10 {
      try store.write { tx throws in
        for i in 0..<100 {
          _ = try tx.insert("AddressBook", ["firstName": .string("\(batch)-\(i)-" + big), "lastName": .string(big)])
        }
      }
    }
    try store.read { s throws in #expect(try s.objects(of: "AddressBook").count == 1000) }
    #expect(store.env.info.mapSize > 1 << 20)
    #expect(try store.verify().isOK)
  }
}

@Suite("Opening stores")
struct OpeningTests {
  @Test("a second store object on the same directory in one process is refused")
  func secondHandle() throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV2())
    defer { removeDirectory(dir) }
    #expect {
      _ = try EventStore(path: store.path)
    } throws: { error in
      (error as? StoreError)?.code == .alreadyOpen
    }
    // Through another spelling of the same path, too.
    #expect(throws: StoreError.self) { _ = try EventStore(path: store.path + "/../store") }
  }

  @Test("a store written by a newer format is refused with the versions named")
  func newerFormat() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    _ = try EventStore.create(at: path, model: try Fixtures.addressBookV1())
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(maxDatabases: 64))
      let meta = try #require(try env.openDatabase("meta", create: false))
      _ = try env.write { txn in try txn.put(meta, key: "format", value: "99") }
    }
    #expect {
      _ = try EventStore(path: path)
    } throws: { error in
      guard let e = error as? StoreError, e.code == .newerFormat else { return false }
      return e.context == .format(found: 99, supported: EventStore.formatVersion)
    }
  }

  @Test("a durable store keeps zeros written past its data; a relaxed one, or one asked for none, does not")
  func fileReserve() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let cases: [(String, StoreOptions, expectsReserve: Bool)] = [
      ("durable", StoreOptions(), true),
      ("relaxed", StoreOptions(durability: .relaxed), false),
      ("none", StoreOptions(fileReserve: 0), false),
    ]
    for (name, options, expectsReserve) in cases {
      let store = try EventStore.create(at: dir + "/" + name, model: try Fixtures.addressBookV1(), options: options)
      for i in 0..<20 {
        try store.write { tx in
          try tx.insert("AddressBook", ["firstName": .string("n\(i)"), "lastName": .string("l")])
        }
      }
      let st = try store.statistics()
      if expectsReserve {
        #expect(st.fileSize - st.usedSize >= options.fileReserve / 2, "\(name): \(st.fileSize) of \(st.usedSize)")
        #expect(st.fileSize - st.usedSize <= options.fileReserve * 3 / 2, "\(name)")
      } else {
        #expect(st.fileSize == st.usedSize, "\(name): \(st.fileSize) of \(st.usedSize)")
      }
      #expect(try store.verify().isOK)
    }
  }

  @Test("a read-only store refuses writes with a clear error")
  func readOnly() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    _ = try EventStore.create(at: path, model: try Fixtures.addressBookV1())
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    #expect(throws: StoreError.readOnly(path: path)) {
      try store.write { tx in _ = try tx.insert("AddressBook") }
    }
  }
}
