import EventGraph
import Foundation
import TestSupport
import Testing

/// The example models, the namespaces their types are generated in, and the checked-in files.
enum Examples {
  static let root: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  static let generated: [(model: String, namespace: String?, file: String)] = [
    ("AddressBook.v1.model.json", "AddressBookV1", "AddressBookV1.swift"),
    ("AddressBook.v2.model.json", "AddressBookV2", "AddressBookV2.swift"),
    ("Company.model.json", nil, "Company.swift"),
  ]

  static func model(_ file: String) throws -> Model { try Model(contentsOf: root + "/Docs/examples/" + file) }

  static func store(_ model: Model, _ label: String = #function) throws -> (EventStore, String) {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("eventgraph-generated-\(label.filter(\.isLetter))-\(UUID().uuidString.prefix(8))").path
    return (try EventStore.create(at: dir + "/store", model: model), dir)
  }
}

@Suite("Generated record types: the checked-in files are what codegen writes, and they work")
struct GeneratedRecordsTests {
  @Test("each checked-in file is byte for byte what codegen writes for its model", arguments: 0..<3)
  func upToDate(index: Int) throws {
    let (model, namespace, file) = Examples.generated[index]
    let path = Examples.root + "/Tests/GeneratedRecordsTests/Generated/" + file
    let expected = try Examples.model(model).recordSource(namespace: namespace)
    let actual = try String(contentsOfFile: path, encoding: .utf8)
    #expect(actual == expected, "regenerate with: eventtool codegen Docs/examples/\(model) --out \(path)")
  }

  @Test("the address book of version 1 inserts and fetches through its generated type")
  func addressBookV1() throws {
    let (store, dir) = try Examples.store(try Examples.model("AddressBook.v1.model.json"))
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let people = [("桃", "太郎", "555-0101"), ("Émile", "Zola", nil), ("Ada", "Lovelace", "555-0199")]
    try store.write { tx in
      for (first, last, phone) in people {
        try tx.insert(AddressBookV1.AddressBook(firstName: first, lastName: last, phone1: phone))
      }
    }
    let sorted = try store.fetch(AddressBookV1.AddressBook.self, where: "phone1 != nil", sortedBy: [.init("lastName")])
    #expect(sorted.map(\.lastName) == ["Lovelace", "太郎"])
    #expect(sorted.allSatisfy { $0.phone2 == nil })
  }

  @Test("the PhoneBook split of version 2 reads as records with Refs both ways")
  func addressBookV2() throws {
    let (store, dir) = try Examples.store(try Examples.model("AddressBook.v2.model.json"))
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let book = try store.write { tx in
      let book = try tx.insert(AddressBookV2.AddressBook(firstName: "桃", lastName: "太郎"))
      try tx.insert(AddressBookV2.PhoneBook(phoneNumber: "555-0101", addressBook: book))
      try tx.insert(AddressBookV2.PhoneBook(phoneNumber: "555-0102", type: 1, addressBook: book))
      return book
    }.value!
    let phones = try store.fetch(AddressBookV2.PhoneBook.self, sortedBy: [.init("phoneNumber")])
    #expect(phones.map(\.phoneNumber) == ["555-0101", "555-0102"])
    #expect(phones.map(\.type) == [0, 1])
    #expect(phones.allSatisfy { $0.addressBook == book })
    #expect(Set(try store.record(book)?.phones ?? []) == Set(phones.map(\.id)))
  }

  @Test("the company model's generated types keep an ordered to-many and every attribute type it has")
  func company() throws {
    let (store, dir) = try Examples.store(try Examples.model("Company.model.json"))
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var g = SeededGenerator(seed: 18)
    let founded = Date(timeIntervalSince1970: 1_700_000_000.5)
    let (acme, staff) = try store.write { tx in
      let acme = try tx.insert(Company(name: "Acme", founded: founded, logo: Data([1, 2, 3])))
      let sales = try tx.insert(Department(name: "Sales", companies: [acme]))
      let staff = try (0..<5).map { i in
        try tx.insert(
          Employee(
            name: "E\(i)", salary: Decimal(g.int(1000...9000)) / 100, badge: UUID(), company: acme,
            department: sales))
      }
      return (acme, staff)
    }.value!
    let company = try store.record(acme)
    #expect(company?.employees == staff)
    #expect(company?.founded == founded)
    #expect(company?.logo == Data([1, 2, 3]))
    let rich = try store.fetch(Employee.self, where: "salary > 50", sortedBy: [.init("salary", ascending: false)])
    #expect(rich.allSatisfy { ($0.salary ?? 0) > 50 })
    #expect(rich.map { $0.salary ?? 0 } == rich.map { $0.salary ?? 0 }.sorted(by: >))
  }

  @Test("a model default of every kind is the generated property's and the public initializer's, exactly")
  func defaults() throws {
    let path = Examples.root + "/Tests/GeneratedRecordsTests/Defaults.model.json"
    let model = try Model(contentsOf: path)
    let checkedIn = try String(
      contentsOfFile: Examples.root + "/Tests/GeneratedRecordsTests/Generated/DefaultsV1.swift", encoding: .utf8)
    #expect(
      checkedIn == (try model.recordSource(namespace: "DefaultsV1", access: .public)),
      "regenerate with: eventtool codegen \(path) --namespace DefaultsV1 --access public --out …/DefaultsV1.swift")
    let (store, dir) = try Examples.store(model)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let home = try #require(URL(string: "https://example.com/"))
    // One object made from the generated initializer's defaults, one left to the model's.
    let ids = try store.write { tx in
      (
        try tx.insert(DefaultsV1.Settings(home: home)).id,
        try tx.insert("Settings", ["home": .uri(home.absoluteString)])
      )
    }
    let (typed, dynamic) = try #require(ids.value)
    try store.read { s in
      let a = try #require(try s.object(typed))
      let b = try #require(try s.object(dynamic))
      let settings = try #require(model.entity(named: "Settings"))
      for attribute in settings.attributes where attribute.defaultValue != nil {
        #expect(a[attribute.id] == attribute.defaultValue, "\(attribute.name)")
        #expect(a[attribute.id] == b[attribute.id], "\(attribute.name)")
      }
    }
    // The literals themselves, read back as the model's values.
    let record = DefaultsV1.Settings(home: home)
    #expect(record.title == "open \"now\"\\ tab\tline\nend é")
    #expect(record.huge.description == "123456789012345678901234567890.125")
    #expect(record.price == Decimal(string: "-12.50"))
    #expect(record.badge == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    #expect(record.blob == Data((0..<64).map { UInt8($0) }))
    #expect(record.since == Date(timeIntervalSince1970: 1_767_225_600.25))
    #expect(record.large == .min && record.medium == .max && record.ratio == 0.1)
  }
}
