import Foundation
import TestSupport

@testable import EventGraph
@testable import EventGraphMigration

/// Random v1 histories of the models the upcast tests use: many small commits of inserts,
/// changes (to values, to '' and to nil) and deletes, with fixed commit times, so that one
/// seed always writes the same bytes.
enum Histories {
  // MARK: - The seed's address book

  static let firstNames = ["桃", "浦島", "一寸", "金", "花咲"]
  static let lastNames = ["太郎", "法師", "爺"]
  static let phones = ["123-4567-7891", "090-111-9999", "090-1234-5678", "03-0000-0000"]

  static func phone(_ g: inout SeededGenerator) -> Value? {
    let r = g.int(0...9)
    if r < 4 { return .string(g.pick(phones)) }
    if r < 7 { return .string("") }
    return nil
  }

  /// Inserts, phone changes to a number, to '' and to nil, name changes and deletes of
  /// AddressBook objects, 1–4 operations a commit.
  static func addressBook(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    var live: [ObjectID] = []
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        if g.chance(0.2) { tx.metadata.author = g.pick(["alice", "bob"]) }
        for _ in 0..<g.int(1...4) {
          let op = live.isEmpty ? 0 : g.int(0...9)
          switch op {
          case 0...2:
            let p = try tx.insert(
              "AddressBook",
              [
                "firstName": .string(g.pick(firstNames)), "lastName": .string(g.pick(lastNames)),
                "phone1": phone(&g), "phone2": phone(&g),
              ])
            live.append(p)
          case 3...5:
            try tx.set(g.pick(live), "phone1", phone(&g))
          case 6...7:
            try tx.set(g.pick(live), "phone2", phone(&g))
          case 8:
            try tx.set(g.pick(live), "firstName", .string(g.pick(firstNames)))
          default:
            let p = g.pick(live)
            try tx.delete(p)
            live.removeAll { $0 == p }
          }
        }
      }
    }
  }

  // MARK: - Shop: a rename and a type change

  static let shopV1 = """
    {"name": "Shop", "version": 1, "entities": [
      {"name": "Client",
       "attributes": [
         {"name": "name", "type": "string"},
         {"name": "score", "type": "int16", "default": 0},
         {"name": "code", "type": "string", "optional": true}],
       "relationships": [
         {"name": "referrer", "destination": "Client", "optional": true, "inverse": "referrals"},
         {"name": "referrals", "destination": "Client", "toMany": true, "inverse": "referrer"}]}
    ]}
    """
  static let shopV2 = """
    {"name": "Shop", "version": 2, "entities": [
      {"name": "Customer", "renamingIdentifier": "Client",
       "attributes": [
         {"name": "fullName", "type": "string", "renamingIdentifier": "name"},
         {"name": "score", "type": "int64", "default": 0},
         {"name": "code", "type": "string", "optional": true}],
       "relationships": [
         {"name": "referredBy", "destination": "Customer", "optional": true, "inverse": "referred",
          "renamingIdentifier": "referrer"},
         {"name": "referred", "destination": "Customer", "toMany": true, "inverse": "referredBy",
          "renamingIdentifier": "referrals"}]}
    ]}
    """
  /// Client becomes Customer (renamingIdentifier), name becomes fullName, score widens from
  /// int16 to int64, code is upper-cased by an expression, and the referral relationships
  /// are renamed.
  static let shopMapping = """
    {"source": 1, "destination": 2, "entityMappings": [
      {"name": "ClientToCustomer", "source": "Client", "destination": "Customer",
       "attributes": {"code": "uppercase($source.code)"}}
    ]}
    """

  static func shop(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    var live: [ObjectID] = []
    func code(_ g: inout SeededGenerator) -> Value? {
      let r = g.int(0...5)
      return r < 3 ? .string(g.pick(["ab-1", "Zz", "çà", "q"])) : r < 4 ? .string("") : nil
    }
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        for _ in 0..<g.int(1...3) {
          let op = live.isEmpty ? 0 : g.int(0...9)
          switch op {
          case 0...2:
            let c = try tx.insert("Client", ["name": .string(g.pick(["Ann", "Bo", "Cy"])), "code": code(&g)])
            if g.chance(0.5) { try tx.set(c, "score", .int16(Int16(g.int(-32768...32767)))) }
            if !live.isEmpty && g.chance(0.5) { try tx.setRelationship(c, "referrer", to: g.pick(live)) }
            live.append(c)
          case 3...4:
            try tx.set(g.pick(live), "score", .int16(Int16(g.int(-300...300))))
          case 5:
            try tx.set(g.pick(live), "code", code(&g))
          case 6...7:
            let c = g.pick(live)
            let others = live.filter { $0 != c }
            try tx.setRelationship(c, "referrer", to: others.isEmpty || g.chance(0.3) ? nil : g.pick(others))
          case 8:
            try tx.set(g.pick(live), "name", .string(g.pick(["Dee", "Ed"])))
          default:
            let c = g.pick(live)
            try tx.delete(c)
            live.removeAll { $0 == c }
          }
        }
      }
    }
  }

  // MARK: - Staff: two entities merged into one relationship

  static let staffV1 = """
    {"name": "Staff", "version": 1, "entities": [
      {"name": "Person",
       "attributes": [{"name": "name", "type": "string"}],
       "relationships": [
         {"name": "employment", "destination": "Employment", "optional": true, "inverse": "person",
          "deleteRule": "cascade"}]},
      {"name": "Company",
       "attributes": [{"name": "name", "type": "string"}],
       "relationships": [
         {"name": "employments", "destination": "Employment", "toMany": true, "inverse": "company",
          "deleteRule": "cascade"}]},
      {"name": "Employment",
       "attributes": [{"name": "role", "type": "string", "optional": true}],
       "relationships": [
         {"name": "person", "destination": "Person", "optional": true, "inverse": "employment"},
         {"name": "company", "destination": "Company", "optional": true, "inverse": "employments"}]}
    ]}
    """
  static let staffV2 = """
    {"name": "Staff", "version": 2, "entities": [
      {"name": "Person",
       "attributes": [
         {"name": "name", "type": "string"},
         {"name": "role", "type": "string", "optional": true},
         {"name": "companyName", "type": "string", "optional": true}],
       "relationships": [
         {"name": "employer", "destination": "Company", "optional": true, "inverse": "staff"}]},
      {"name": "Company",
       "attributes": [{"name": "name", "type": "string"}],
       "relationships": [
         {"name": "staff", "destination": "Person", "toMany": true, "inverse": "employer"}]}
    ]}
    """
  /// Person —employment→ Employment —company→ Company becomes Person —employer→ Company:
  /// the Employment entity goes, its role moves onto the person, and the company's name is
  /// copied three hops away.
  static let staffMapping = """
    {"source": 1, "destination": 2, "entityMappings": [
      {"name": "PersonToPerson", "source": "Person", "destination": "Person",
       "attributes": {"role": "$source.employment.role", "companyName": "$source.employment.company.name"},
       "relationships": {"employer": {"mapping": "CompanyToCompany", "sources": "$source.employment.company"}}},
      {"name": "CompanyToCompany", "source": "Company", "destination": "Company"}
    ]}
    """

  static func staff(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    var people: [ObjectID] = []
    var companies: [ObjectID] = []
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        // The generator's lists may hold objects a cascade deleted: drop them first.
        people = try people.filter { try tx.object($0) != nil }
        companies = try companies.filter { try tx.object($0) != nil }
        for _ in 0..<g.int(1...3) {
          switch g.int(0...11) {
          case 0...1:
            companies.append(try tx.insert("Company", ["name": .string(g.pick(["ACME", "Initech", "Umbrella"]))]))
          case 2...3:
            people.append(try tx.insert("Person", ["name": .string(g.pick(["Ann", "Bo", "Cy", "Dee"]))]))
          case 4...5 where !people.isEmpty:
            // A new employment (replacing the person's old one, which is then left unattached or deleted).
            let p = g.pick(people)
            if let old = try tx.related(p, "employment").first, g.chance(0.5) { try tx.delete(old) }
            let e = try tx.insert("Employment", ["role": g.chance(0.7) ? .string(g.pick(["dev", "ops", ""])) : nil])
            try tx.setRelationship(e, "person", to: p)
            if !companies.isEmpty && g.chance(0.8) { try tx.setRelationship(e, "company", to: g.pick(companies)) }
          case 6 where !people.isEmpty:
            if let e = try tx.related(g.pick(people), "employment").first {
              try tx.setRelationship(e, "company", to: companies.isEmpty || g.chance(0.2) ? nil : g.pick(companies))
            }
          case 7 where !people.isEmpty:
            if let e = try tx.related(g.pick(people), "employment").first {
              try tx.set(e, "role", g.chance(0.2) ? nil : .string(g.pick(["lead", "dev", ""])))
            }
          case 8 where !companies.isEmpty:
            try tx.set(g.pick(companies), "name", .string(g.pick(["Globex", "Hooli", "ACME"])))
          case 9 where !companies.isEmpty:
            let c = g.pick(companies)
            try tx.delete(c)
            companies.removeAll { $0 == c }
          case 10 where !people.isEmpty:
            let p = g.pick(people)
            try tx.delete(p)
            people.removeAll { $0 == p }
          case 11 where !people.isEmpty:
            if let e = try tx.related(g.pick(people), "employment").first { try tx.delete(e) }
          default:
            people.append(try tx.insert("Person", ["name": .string("Eve")]))
          }
          people = try people.filter { try tx.object($0) != nil }
          companies = try companies.filter { try tx.object($0) != nil }
        }
      }
    }
  }
}

extension Histories {
  // MARK: - The deep-copy seed's company: an ordered to-many, many-to-many, deny, every value type

  static func companyV1() throws -> Model { try Model(contentsOf: Examples.root + "/Company.model.json") }

  /// Company v2, inferred from v1: Employee.name becomes fullName (renamingIdentifier),
  /// Company gains an optional motto, Department gains a code with a default.
  static func companyV2() throws -> Model {
    let text = String(
      decoding: FileManager.default.contents(atPath: Examples.root + "/Company.model.json") ?? Data(), as: UTF8.self
    )
    .replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
    .replacingOccurrences(
      of: "{\"name\": \"logo\", \"type\": \"binary\", \"optional\": true}",
      with:
        "{\"name\": \"logo\", \"type\": \"binary\", \"optional\": true},\n{\"name\": \"motto\", \"type\": \"string\", \"optional\": true}"
    )
    .replacingOccurrences(
      of: "{\"name\": \"name\", \"type\": \"string\"},\n        {\"name\": \"salary\"",
      with:
        "{\"name\": \"fullName\", \"type\": \"string\", \"renamingIdentifier\": \"name\"},\n        {\"name\": \"salary\""
    )
    .replacingOccurrences(
      of: "\"name\": \"Department\",\n      \"attributes\": [\n        {\"name\": \"name\", \"type\": \"string\"}",
      with:
        "\"name\": \"Department\",\n      \"attributes\": [\n        {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"code\", \"type\": \"int32\", \"default\": 7}"
    )
    let m = try model(text)
    precondition(m.entity(named: "Employee")?.attribute(named: "fullName") != nil, "Company v2 edit did not apply")
    precondition(m.entity(named: "Company")?.attribute(named: "motto") != nil, "Company v2 edit did not apply")
    precondition(m.entity(named: "Department")?.attribute(named: "code") != nil, "Company v2 edit did not apply")
    return m
  }

  /// Companies with ordered employees inserted at random positions and moved, managers,
  /// departments (emptied, then deleted in the same commit: the deny rule), every value type.
  static func company(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        let companies = try tx.objects(of: "Company")
        let employees = try tx.objects(of: "Employee")
        let departments = try tx.objects(of: "Department")
        for _ in 0..<g.int(1...3) {
          switch g.int(0...13) {
          case 0:
            let c = try tx.insert("Company", ["name": .string(g.pick(["ACME", "Initech"]))])
            if g.chance(0.5) {
              try tx.set(c, "founded", .date(Date(timeIntervalSince1970: Double(g.int(0...2_000_000_000)) / 8)))
            }
            if g.chance(0.5) { try tx.set(c, "logo", .binary((0..<g.int(0...5)).map { _ in UInt8(g.int(0...255)) })) }
          case 1...3 where !companies.isEmpty:
            let c = g.pick(companies)
            guard try tx.object(c) != nil else { break }
            let e = try tx.insert("Employee", ["name": .string(g.pick(["Ann", "Bo", "Cy"]))])
            if g.chance(0.5) { try tx.set(e, "salary", .decimal(Decimal(g.int(0...99999)) / 100)) }
            if g.chance(0.3),
              let badge = UUID(
                uuidString: "00000000-0000-4000-8000-" + String(format: "%012llx", g.next() & 0xFFFF_FFFF_FFFF))
            {
              try tx.set(e, "badge", .uuid(badge))
            }
            let count = try tx.related(c, "employees").count
            try tx.link(c, "employees", e, at: g.int(0...count))
          case 4...5 where !companies.isEmpty:
            // Move an employee to another position.
            let c = g.pick(companies)
            guard try tx.object(c) != nil else { break }
            let staff = try tx.related(c, "employees")
            if staff.count > 1 { try tx.link(c, "employees", g.pick(staff), at: g.int(0...(staff.count - 1))) }
          case 6 where employees.count > 1:
            let e = g.pick(employees)
            let m = g.pick(employees)
            if e != m, try tx.object(e) != nil, try tx.object(m) != nil, try tx.related(m, "manager") != [e] {
              try tx.setRelationship(e, "manager", to: g.chance(0.2) ? nil : m)
            }
          case 7:
            let d = try tx.insert("Department", ["name": .string(g.pick(["R&D", "Sales"]))])
            if !companies.isEmpty {
              let c = g.pick(companies)
              if try tx.object(c) != nil { try tx.link(d, "companies", c) }
            }
          case 8 where !departments.isEmpty && !employees.isEmpty:
            let e = g.pick(employees)
            let d = g.pick(departments)
            if try tx.object(e) != nil, try tx.object(d) != nil { try tx.setRelationship(e, "department", to: d) }
          case 9 where !departments.isEmpty:
            // Empty a department, then delete it: allowed by its deny rule within one commit.
            let d = g.pick(departments)
            guard try tx.object(d) != nil else { break }
            for e in try tx.related(d, "employees") { try tx.setRelationship(e, "department", to: nil) }
            try tx.delete(d)
          case 10 where !employees.isEmpty:
            let e = g.pick(employees)
            if try tx.object(e) != nil { try tx.delete(e) }
          case 11 where !companies.isEmpty && g.chance(0.3):
            let c = g.pick(companies)
            if try tx.object(c) != nil { try tx.delete(c) }
          case 12 where !employees.isEmpty:
            let e = g.pick(employees)
            if try tx.object(e) != nil {
              try tx.set(e, "salary", g.chance(0.3) ? nil : .decimal(Decimal(string: "12.5") ?? 0))
            }
          case 13 where !companies.isEmpty:
            let c = g.pick(companies)
            if try tx.object(c) != nil { try tx.set(c, "name", .string(g.pick(["Globex", "Hooli"]))) }
          default:
            _ = try tx.insert("Company", ["name": .string("Umbrella")])
          }
        }
      }
    }
  }
}
