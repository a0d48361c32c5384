import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("Ordered relationships: order keys, checked against a plain array")
struct OrderedListTests {
  @Test(
    "order keys stay strictly increasing and the list follows an array, whatever the inserts", arguments: [1, 2, 3])
  func keysInMemory(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    var list = OrderedListModel()
    var model: [ObjectID] = []
    for i in 0..<4000 {
      // Half at a few crowded places (a front, a second place, before the last), half anywhere.
      let p: Int
      switch g.int(0...5) {
      case 0: p = 0
      case 1: p = min(1, model.count)
      case 2: p = max(0, model.count - 1)
      default: p = g.int(0...model.count)
      }
      let t = ObjectID(UInt64(i + 1))
      let position = g.int(0...9) == 0 ? nil : p  // nil: appended
      try list.insert(t, at: position)
      model.insert(t, at: position ?? model.count)
    }
    #expect(list.members.map(\.target) == model)
    #expect(zip(list.members, list.members.dropFirst()).allSatisfy { $0.key < $1.key })
    let buckets = Dictionary(grouping: list.members, by: { OrderRanks.bucket($0.key) })
    #expect(buckets.values.map(\.count).max() ?? 0 <= OrderRanks.bucketLimit)
  }

  @Test(
    "a long list's positions come from its counts: inserts crowding one place, moves and removals across the threshold match an array",
    arguments: [5, 6])
  func longListAgainstArray(seed: UInt64) throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: seed)
    let company = try store.write { tx in try tx.insert("Company", ["name": .string("ACME")]) }.value!
    let rel = LinkSlot(try #require(store.model.entity(named: "Company")?.relationship(named: "employees")).id)
    var model: [ObjectID] = []
    var made = 0
    // Grows past the threshold, shrinks below it, grows again: each phase (target length,
    // number of changes).
    let phases = [(400, 500), (60, 500), (500, 700)]
    for (phase, (target, changes)) in phases.enumerated() {
      var crowded = g.int(0...max(0, model.count))
      for step in 0..<changes {
        try store.write { tx in
          for _ in 0..<g.int(1...4) {
            let grow = model.count < target ? g.int(0...3) != 0 : g.int(0...3) == 0
            if grow || model.isEmpty {
              made += 1
              let e = try tx.insert("Employee", ["name": .string("e\(made)")])
              // Half at one crowded place, which fills its bucket and forces renumbering.
              let p = g.int(0...1) == 0 ? min(crowded, model.count) : g.int(0...model.count)
              try tx.link(company, "employees", e, at: p)
              model.insert(e, at: p)
            } else if g.int(0...2) == 0 {
              let from = g.int(0...(model.count - 1))
              let to = g.int(0...(model.count - 1))
              try tx.link(company, "employees", model[from], at: to)
              model.insert(model.remove(at: from), at: to)
            } else {
              try tx.unlink(company, "employees", model.remove(at: g.int(0...(model.count - 1))))
            }
          }
        }
        if step % 50 == 0 { crowded = g.int(0...model.count) }
        if step % 100 == 0 || step == changes - 1 {
          let stored = try store.read { try $0.related(company, "employees") }
          #expect(stored == model, "phase \(phase), step \(step)")
          if stored != model { return }
          // Every member's position, as a move finds it, and the bucket bound.
          let (positions, keys) = try store.read { s in
            (
              try model.map { try s.reader.orderedPosition(company, rel, of: $0) },
              try model.map { try #require(try s.reader.orderKey(company, rel, of: $0)) }
            )
          }
          #expect(positions == Array(0..<model.count).map { Optional($0) }, "phase \(phase), step \(step)")
          let buckets = Dictionary(grouping: keys, by: OrderRanks.bucket)
          #expect(buckets.values.map(\.count).max() ?? 0 <= OrderRanks.bucketLimit)
        }
      }
    }
    #expect(model.count > OrderRanks.threshold)
    // The counts are a function of the keys: a rebuild and a clone's bulk write hold the same bytes.
    let report = try store.verify()
    #expect(report.isOK, "\(report.problems.prefix(3))")
    let clone = try store.clone(root: company)
    #expect(try store.read { try $0.related(clone.root, "employees") } == model.compactMap { clone.identities[$0] })
    #expect(try store.verify().isOK)
    _ = try store.rebuild()
    #expect(try store.read { try $0.related(company, "employees") } == model)
  }

  @Test("random inserts, moves and removals in a store match an array; replay, verify, clone and snapshot agree")
  func storeAgainstArray() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 19)
    let company = try store.write { tx in try tx.insert("Company", ["name": .string("ACME")]) }.value!
    var model: [ObjectID] = []
    var spare: [ObjectID] = []
    var made = 0
    for round in 0..<300 {
      try store.write { tx in
        for _ in 0..<g.int(1...6) {
          switch g.int(0...9) {
          case 0...3:  // a new employee, at a place (crowding the front, the second place or the end at times)
            made += 1
            let e = try tx.insert("Employee", ["name": .string("e\(made)")])
            let p = [0, min(1, model.count), model.count, g.int(0...model.count)][g.int(0...3)]
            try tx.link(company, "employees", e, at: p)
            model.insert(e, at: p)
          case 4:  // appended
            made += 1
            let e = try spare.popLast() ?? tx.insert("Employee", ["name": .string("e\(made)")])
            try tx.link(company, "employees", e)
            model.append(e)
          case 5...6 where !model.isEmpty:  // moved
            let from = g.int(0...(model.count - 1))
            let e = model.remove(at: from)
            let to = g.int(0...model.count)
            try tx.link(company, "employees", e, at: to)
            model.insert(e, at: to)
          case 7 where !model.isEmpty:  // removed, kept for later
            let e = model.remove(at: g.int(0...(model.count - 1)))
            try tx.unlink(company, "employees", e)
            spare.append(e)
          case 8 where !model.isEmpty:  // deleted
            let e = model.remove(at: g.int(0...(model.count - 1)))
            try tx.delete(e)
          case 9 where round % 10 == 0:  // the whole list set: a few members swapped, one left out
            var wanted = model
            for _ in 0..<3 where wanted.count > 1 {
              wanted.swapAt(g.int(0...(wanted.count - 1)), g.int(0...(wanted.count - 1)))
            }
            if let left = wanted.popLast() { spare.append(left) }
            try tx.setRelationship(company, "employees", to: wanted)
            model = wanted
          default:
            break
          }
        }
      }
      let stored = try store.read { try $0.related(company, "employees") }
      #expect(stored == model, "round \(round)")
      if stored != model { return }
    }
    #expect(model.count > 150)
    #expect(try store.read { try $0.related(company, "employees").count } == model.count)
    let report = try store.verify()
    #expect(report.isOK, "\(report.problems.prefix(3))")
    // The copies keep the order.
    let clone = try store.clone(root: company)
    let copied = try store.read { try $0.related(clone.root, "employees") }
    #expect(copied == model.compactMap { clone.identities[$0] })
    #expect(try store.verify().isOK)
    // A snapshot renumbers: its company's employees are compared by name.
    try store.snapshot(root: company, to: dir + "/snapshot")
    let out = try EventStore(path: dir + "/snapshot", options: StoreOptions(readOnly: true))
    let names = { (s: EventStore, c: ObjectID) in
      try s.read { r in try r.related(c, "employees").map { try r.value($0, "name") } }
    }
    let root = try #require(try out.read { try $0.objects(of: "Company").first })
    #expect(try names(out, root) == names(store, company))
    #expect(try out.verify().isOK)
    _ = try store.rebuild()
    #expect(try store.read { try $0.related(company, "employees") } == model)
  }
}
