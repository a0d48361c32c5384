import Foundation
import Testing

@testable import EventGraph

/// Personal data (Docs/privacy.md): sealed where it is stored, opened with the key,
/// erased by destroying its subject's key.
@Suite("Personal data: sealed per subject, erased by destroying the key")
struct PrivacyTests {
  /// The seed's v2 address book with `lastName` and `phoneNumber` personal, a phone's
  /// subject its address book.
  static func model() throws -> Model {
    var descriptions = try Fixtures.addressBookV2().descriptions
    for i in descriptions.indices {
      for j in descriptions[i].attributes.indices
      where ["lastName", "phoneNumber"].contains(descriptions[i].attributes[j].name) {
        descriptions[i].attributes[j].isPersonal = true
        // Indexed, so that an erasure's walk from the subject to its phones is seen.
        if descriptions[i].attributes[j].name == "phoneNumber" { descriptions[i].attributes[j].isIndexed = true }
      }
      if descriptions[i].name == "PhoneBook" { descriptions[i].subject = "addressBook" }
    }
    return try Model(name: "AddressBook", version: 2, entities: descriptions)
  }

  static func keyFile(in dir: String) throws -> String {
    let path = dir + "/store.key"
    try EventStore.generateKeyFile(at: path)
    return path
  }

  /// Every file under `dir`, read whole.
  static func files(_ dir: String) throws -> [(String, [UInt8])] {
    let names = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
    return names.compactMap { name in
      let path = dir + "/" + name
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
        let data = FileManager.default.contents(atPath: path)
      else { return nil }
      return (name, [UInt8](data))
    }
  }

  static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count, let first = needle.first else { return false }
    var i = 0
    while i <= haystack.count - needle.count {
      if haystack[i] == first, Array(haystack[i..<(i + needle.count)]) == needle { return true }
      i += 1
    }
    return false
  }

  /// The marker's bytes in UTF-8 and UTF-16 (both orders).
  static func encodings(_ marker: String) -> [[UInt8]] {
    let utf16 = Array(marker.utf16)
    return [
      Array(marker.utf8), utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] },
      utf16.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] },
    ]
  }

  @Test(
    "personal values are read back with the key and appear in no file of the store, its backup or its compacted copy")
  func noPlaintext() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = try Self.keyFile(in: dir)
    let path = dir + "/store"
    let markers = (0..<20).map { "MARKER-\($0)-\(UUID().uuidString)" }
    do {
      let store = try EventStore.create(at: path, model: try Self.model(), options: StoreOptions(keyFile: key))
      try store.write { tx in
        for (i, m) in markers.enumerated() where i % 2 == 0 {
          let person = try tx.insert("AddressBook", ["firstName": .string("p\(i)"), "lastName": .string(m)])
          // Set before the link: held until the commit knows the phone's subject.
          let phone = try tx.insert("PhoneBook", ["phoneNumber": .string(markers[i + 1])])
          try tx.link(person, "phones", phone)
        }
      }
      let read = try store.read { s in
        try s.objects(of: "AddressBook").map { try s.value($0, "lastName") }
          + (try s.objects(of: "PhoneBook").map { try s.value($0, "phoneNumber") })
      }
      #expect(Set(read.compactMap { $0?.stringValue }) == Set(markers))
      _ = try store.backup(to: dir + "/backup")
    }
    _ = try EventStore.compact(at: path)
    for (name, bytes) in try Self.files(dir) {
      for m in markers {
        for e in Self.encodings(m) { #expect(!Self.contains(bytes, e), "\(name) holds \(m)") }
      }
    }
    // The backup opens with the same key.
    let backup = try EventStore(path: dir + "/backup", options: StoreOptions(readOnly: true, keyFile: key))
    let names = try backup.read { s in try s.objects(of: "AddressBook").map { try s.value($0, "lastName") } }
    #expect(
      names.compactMap { $0?.stringValue }.sorted() == markers.enumerated().filter { $0.0 % 2 == 0 }.map(\.1).sorted())
  }

  @Test(
    "an erasure makes the subject's values, and its phones', unreadable even with the key, removes its key from every byte of the files, and leaves every other subject readable"
  )
  func erasure() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = try Self.keyFile(in: dir)
    let path = dir + "/store"
    let store = try EventStore.create(at: path, model: try Self.model(), options: StoreOptions(keyFile: key))
    let (momo, beppo, phone) = try store.write { tx in
      let m = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Secret")])
      let b = try tx.insert("AddressBook", ["firstName": .string("Beppo"), "lastName": .string("Kept")])
      let p = try tx.insert("PhoneBook", ["phoneNumber": .string("555")])
      try tx.link(m, "phones", p)
      return (m, b, p)
    }.value!
    let dataKey = try #require(try store.env.read { try store.dbs.keyring?.testingDataKey(momo, in: $0) })
    #expect(try store.read { try $0.fetch("PhoneBook", where: "phoneNumber == '555'") }.objects == [phone])
    let first = try store.write { tx in try tx.erase(momo, reason: "request") }
    // The phone's blind hash left the index with its subject's key.
    #expect(try store.read { try $0.fetch("PhoneBook", where: "phoneNumber == '555'") }.examined == 0)
    #expect(first.value == true && first.commit != nil)
    let second = try store.write { tx in try tx.erase(momo) }
    #expect(second.value == false && second.commit == nil)
    try store.read { s in
      guard case .sealed(let v)? = try s.value(momo, "lastName") else {
        Issue.record("an erased value was opened")
        return
      }
      #expect(v.state == .erased)
      guard case .sealed(let p)? = try s.value(phone, "phoneNumber") else {
        Issue.record("an erased phone's number was opened")
        return
      }
      #expect(p.state == .erased)
      #expect(try s.value(beppo, "lastName") == .string("Kept"))
      #expect(try s.value(momo, "firstName") == .string("Momo"))
      let events = try s.commits().flatMap(\.events)
      #expect(events.contains(.erase(momo, reason: "request")))
    }
    #expect(try store.verify().isOK)
    for (name, bytes) in try Self.files(dir) {
      #expect(!Self.contains(bytes, dataKey), "\(name) holds the erased subject's data key")
    }
    // New personal values for an erased subject are refused; a phone is not a subject.
    #expect(throws: StoreError.self) { try store.write { tx in try tx.set(momo, "lastName", .string("again")) } }
    do {
      _ = try store.write { tx in try tx.erase(phone) }
      Issue.record("a phone was erased")
    } catch let e as StoreError {
      #expect(e.code == .notASubject)
      #expect(e.target == "AddressBook/\(momo.rawValue)")
    }
  }

  @Test(
    "without the key a store of personal data reads its other values, shows personal ones as locked, and refuses writes; a wrong key is refused"
  )
  func withoutTheKey() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = try Self.keyFile(in: dir)
    let path = dir + "/store"
    let momo = try {
      let store = try EventStore.create(at: path, model: try Self.model(), options: StoreOptions(keyFile: key))
      return try store.write { tx in
        try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Secret")])
      }.value!
    }()
    do {
      let store = try EventStore(path: path)
      try store.read { s in
        #expect(try s.value(momo, "firstName") == .string("Momo"))
        guard case .sealed(let v)? = try s.value(momo, "lastName") else {
          Issue.record("a personal value read without the key")
          return
        }
        #expect(v.state == .locked)
      }
      do {
        _ = try store.write { tx in try tx.set(momo, "firstName", .string("M")) }
        Issue.record("a write without the key")
      } catch let e as StoreError {
        #expect(e.code == .keyRequired)
      }
    }
    let other = dir + "/other.key"
    try EventStore.generateKeyFile(at: other)
    do {
      _ = try EventStore(path: path, options: StoreOptions(keyFile: other))
      Issue.record("a wrong key opened the store")
    } catch let e as StoreError {
      #expect(e.code == .wrongKey)
      guard case .key(let file, _) = e.context else { throw e }
      #expect(file == other)
    }
    #expect(throws: StoreError.self) { try EventStore.create(at: dir + "/new", model: try Self.model()) }
  }

  @Test(
    "the model file carries personal and subject, and refuses subject paths that are unknown, to-many, attributes or cycles"
  )
  func modelChecks() throws {
    let m = try Self.model()
    let again = try Model(json: Array(m.jsonText.utf8), file: "again")
    #expect(again == m)
    #expect(again.entity(named: "PhoneBook")?.subjectPath.count == 1)
    #expect(again.entity(named: "AddressBook")?.personal.contains(true) == true)
    func refuses(_ entities: [EntityDescription]) -> ModelError.Code? {
      do {
        _ = try Model(name: "M", version: 1, entities: entities)
        return nil
      } catch let e as ModelError {
        return e.code
      } catch {
        return nil
      }
    }
    let a = AttributeDescription(name: "n", type: .string, isPersonal: true)
    #expect(refuses([EntityDescription(name: "A", attributes: [a], subject: "missing")]) == .invalidSubject)
    #expect(
      refuses([
        EntityDescription(
          name: "A", attributes: [a],
          relationships: [RelationshipDescription(name: "bs", destination: "B", isToMany: true)], subject: "bs"),
        EntityDescription(name: "B"),
      ]) == .invalidSubject)
    #expect(refuses([EntityDescription(name: "A", attributes: [a], subject: "n")]) == .invalidSubject)
    #expect(
      refuses([
        EntityDescription(
          name: "A", attributes: [a], relationships: [RelationshipDescription(name: "b", destination: "B")],
          subject: "b"),
        EntityDescription(
          name: "B", relationships: [RelationshipDescription(name: "a", destination: "A")], subject: "a"),
      ]) == .invalidSubject)
    #expect(
      refuses([
        EntityDescription(
          name: "A", attributes: [AttributeDescription(name: "t", type: .string, isTransient: true, isPersonal: true)])
      ]) == .invalidRule)
  }

  @Test("a personal attribute's rules are kept: a value that breaks them is refused before it is sealed")
  func rules() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = try Self.keyFile(in: dir)
    let model = try Model(
      name: "M", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          attributes: [
            AttributeDescription(
              name: "email", type: .string, isOptional: true, maxLength: 20, regularExpression: "[a-z]+@[a-z.]+",
              isPersonal: true),
            AttributeDescription(name: "age", type: .int64, isOptional: true, minValue: .int64(0), isPersonal: true),
          ])
      ])
    let store = try EventStore.create(at: dir + "/s", model: model, options: StoreOptions(keyFile: key))
    let p = try store.write { tx in try tx.insert("Person", ["email": .string("ada@example.org")]) }.value!
    for (attribute, value) in [
      ("email", Value.string("not an address")), ("email", .string("averyveryverylongname@example.org")),
      ("age", .int64(-1)),
    ] {
      do {
        _ = try store.write { tx in try tx.set(p, attribute, value) }
        Issue.record("\(attribute) = \(value.displayText) broke its rule and was kept")
      } catch let e as StoreError {
        #expect(e.code == .validation)
        #expect(e.property == attribute)
      }
    }
    _ = try store.write { tx in try tx.set(p, "age", .int64(36)) }
    #expect(try store.read { try $0.value(p, "age") } == .int64(36))
    #expect(try store.read { try $0.value(p, "email") } == .string("ada@example.org"))
  }
}

/// A clone of personal data belongs to the copy's subject: it is sealed again under the
/// copied subject's key, so that each side is erased on its own.
@Suite("Personal data: clones sealed under their own subjects")
struct PrivacyCloneTests {
  /// A store of personal data in `dir` with Momo (last name Secret) and her phone 555.
  static func momoWithPhone(_ dir: String) throws -> (EventStore, ObjectID, ObjectID) {
    let key = try PrivacyTests.keyFile(in: dir)
    let store = try EventStore.create(
      at: dir + "/store", model: try PrivacyTests.model(), options: StoreOptions(keyFile: key))
    let (momo, phone) = try #require(
      try store.write { tx in
        let m = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Secret")])
        let p = try tx.insert("PhoneBook", ["phoneNumber": .string("555")])
        try tx.link(m, "phones", p)
        return (m, p)
      }.value)
    return (store, momo, phone)
  }

  @Test("erasing the original leaves the copy readable, and erasing the copy erases its phone too")
  func eachSideErasedAlone() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, momo, phone) = try Self.momoWithPhone(dir)
    let copy = try store.clone(root: momo, policy: ["phones": .deep])
    let copyPhone = try #require(copy.identities[phone])
    try store.read { s in
      // Sealed under the copies: the copy's own key, the phone under the copied person.
      let stored = try #require(try s.reader.object(copy.root))
      let lastName = try #require(s.model.entity(named: "AddressBook")?.attribute(named: "lastName"))
      guard case .sealed(let v)? = stored[lastName.id] else {
        Issue.record("the copy's last name is not sealed")
        return
      }
      #expect(v.subject == copy.root)
      let phoneState = try #require(try s.reader.object(copyPhone))
      let number = try #require(s.model.entity(named: "PhoneBook")?.attribute(named: "phoneNumber"))
      guard case .sealed(let n)? = phoneState[number.id] else {
        Issue.record("the copy's phone number is not sealed")
        return
      }
      #expect(n.subject == copy.root)
      #expect(try s.value(copy.root, "lastName") == .string("Secret"))
    }
    // The blind index finds both numbers.
    #expect(
      try Set(store.read { try $0.fetch("PhoneBook", where: "phoneNumber == '555'") }.objects) == [phone, copyPhone])
    try store.write { tx in _ = try tx.erase(momo, reason: "the original asked") }
    try store.read { s in
      #expect(try s.value(copy.root, "lastName") == .string("Secret"))
      #expect(try s.value(copyPhone, "phoneNumber") == .string("555"))
      guard case .sealed(let gone)? = try s.value(momo, "lastName") else {
        Issue.record("the original's last name was opened after its erasure")
        return
      }
      #expect(gone.state == .erased)
    }
    try store.write { tx in _ = try tx.erase(copy.root, reason: "the copy's subject asked") }
    try store.read { s in
      guard case .sealed(let a)? = try s.value(copy.root, "lastName"),
        case .sealed(let b)? = try s.value(copyPhone, "phoneNumber")
      else {
        Issue.record("the copy's values were opened after its erasure")
        return
      }
      #expect(a.state == .erased && b.state == .erased)
    }
    #expect(try store.verify().isOK)
  }

  @Test("an override's value for a personal attribute is sealed under the copy's subject, never written plain")
  func overridesSealed() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, momo, phone) = try Self.momoWithPhone(dir)
    let copy = try store.clone(
      root: momo, policy: ["phones": .deep],
      overrides: [
        "AddressBook.lastName": .value(.string("Overridden")), "PhoneBook.phoneNumber": .value(.string("777")),
      ])
    let copyPhone = try #require(copy.identities[phone])
    try store.read { s in
      #expect(try s.value(copy.root, "lastName") == .string("Overridden"))
      #expect(try s.value(copyPhone, "phoneNumber") == .string("777"))
      // Stored sealed, under the copy and the copied person.
      let book = try #require(s.model.entity(named: "AddressBook")?.attribute(named: "lastName"))
      let number = try #require(s.model.entity(named: "PhoneBook")?.attribute(named: "phoneNumber"))
      guard case .sealed(let a)? = try s.reader.object(copy.root)?[book.id],
        case .sealed(let b)? = try s.reader.object(copyPhone)?[number.id]
      else {
        Issue.record("an override's personal value was stored plain")
        return
      }
      #expect(a.subject == copy.root && b.subject == copy.root && !b.blindHash.isEmpty)
    }
    #expect(try store.read { try $0.fetch("PhoneBook", where: "phoneNumber == '777'") }.objects == [copyPhone])
    // No file holds them in plain text: the log and the records hold them sealed.
    for (name, bytes) in try PrivacyTests.files(dir) {
      #expect(!PrivacyTests.contains(bytes, Array("Overridden".utf8)), "\(name) holds an override's plain value")
    }
  }

  @Test(
    "a clone into another store of personal data is refused, naming the object and the attribute; nothing is written")
  func notIntoAnotherStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, momo, _) = try Self.momoWithPhone(dir)
    try FileManager.default.createDirectory(atPath: dir + "/other", withIntermediateDirectories: true)
    let target = try EventStore.create(
      at: dir + "/target", model: store.model,
      options: StoreOptions(keyFile: try PrivacyTests.keyFile(in: dir + "/other")))
    let before = try target.read { try $0.logEnd() }
    #expect {
      try store.clone(root: momo, policy: ["phones": .deep], into: target)
    } throws: { e in
      guard let e = e as? StoreError, e.code == .personalDataAcrossStores else { return false }
      return e.property == "lastName" && e.object?.id == momo && "\(e)".contains(target.path)
    }
    #expect(try target.read { try $0.logEnd() } == before)
  }
}
