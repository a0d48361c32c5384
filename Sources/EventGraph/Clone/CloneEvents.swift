/// Turns a collected subgraph into events: every object's insert and values first, then
/// every link once, in an order that rebuilds ordered relationships exactly on both sides.
///
/// A link is one event, and the projection keeps the inverse, so the inverses of the
/// copy come out right by construction. The only care needed is order: a link event
/// places its target at a position in one list and appends to the inverse list. The
/// lists are replayed one by one (members in order, relationships in model order); a
/// link between two members is emitted when the second of its two lists is replayed,
/// as an append to that list and a placement in the other. A list is therefore empty
/// when its own turn comes, receives its appends in order, and gets the rest of its
/// targets later at positions counted among those already there. This works for every
/// mix of to-one, to-many, ordered and self-referencing relationships, with one event per
/// link and no moves.
struct SubgraphEvents {
  /// Which links the replay keeps.
  enum Links {
    /// A clone: a link between two members is kept when either side's policy is not
    /// `skip`; a link to an object outside the subgraph only under `reference`.
    case policies(CopyPolicyTable)
    /// A snapshot: every link between two members, and nothing else.
    case restriction
  }

  let model: Model
  let graph: Subgraph
  let links: Links
  /// The identity each member gets, by index in ``Subgraph/ids``.
  let identities: [ObjectID]
  /// Each entity's attributes and relationships, computed once (the model computes them
  /// on every call).
  private let attributes: [[Attribute]]
  private let relationships: [[LinkShape]]

  init(model: Model, graph: Subgraph, links: Links, identities: [ObjectID]) {
    self.model = model
    self.graph = graph
    self.links = links
    self.identities = identities
    self.attributes = model.entities.map(\.attributes)
    self.relationships = LinkShape.table(model)
  }

  // MARK: - Objects

  /// Each member's state under its new identity, with `override` replacing values.
  func states(
    override: ((_ member: Int, _ entity: Entity, _ attribute: Attribute) throws -> Value??)? = nil
  ) throws -> [ObjectState] {
    var result: [ObjectState] = []
    result.reserveCapacity(graph.count)
    for (i, original) in graph.states.enumerated() {
      var s = original
      if s.id != identities[i] {
        s = ObjectState(id: identities[i], entity: original.entity, propertyCount: 0)
        s.values = original.values
      }
      if let override, let entity = model.entity(original.entity) {
        for a in attributes[Int(entity.id.rawValue)] {
          if let replaced = try override(i, entity, a) { s.set(a.id, replaced) }
        }
      }
      result.append(s)
    }
    return result
  }

  /// Emits each member's insert and attribute values.
  func emitObjects(_ states: [ObjectState], _ emit: (Event) throws -> Void) throws {
    for s in states {
      let e = Int(s.entity.rawValue)
      guard e < attributes.count else { throw StoreError.corrupt("unknown entity id \(e)") }
      try emit(.insert(s.id, entity: s.entity))
      for a in attributes[e] {
        if let value = s[a.id] { try emit(.set(s.id, attribute: a.id, value: value)) }
      }
    }
  }

  /// Whether the copy keeps a link of member `y` (relationship `r`) to member `x`, or,
  /// when `x` is `nil`, to the object outside the subgraph.
  func keeps(_ y: Int, _ r: LinkShape, _ x: Int?) -> Bool {
    guard case .policies(let p) = links else { return x != nil }
    let policy = p.policy(graph.states[y].entity, r.id)
    guard let x else { return policy == .reference }
    guard policy == .skip else { return true }
    guard let inv = r.inverse else { return false }
    return p.policy(graph.states[x].entity, inv) != .skip
  }

  // MARK: - Links

  /// Emits the links, each once, after ``emitObjects(_:_:)``.
  ///
  /// - Parameter kept: called for every link the copy keeps, seen from each list that
  ///   holds it (member, relationship, original target and its member), in list order,
  ///   lists in slot order (``Subgraph/slot(_:_:)``).
  /// The shape of relationship `rel` of `entity`, as the loops below see it (`nil` for an
  /// entity or identifier the model does not have).
  func linkShape(_ entity: EntityID, _ rel: PropertyID) -> LinkShape? {
    let e = Int(entity.rawValue)
    guard e < relationships.count else { return nil }
    return relationships[e].first { $0.id == rel }
  }

  func emitLinks(
    _ emit: (Event) throws -> Void, kept: ((_ y: Int, _ r: LinkShape, _ t: ObjectID, _ x: Int?) -> Void)? = nil
  ) throws {
    // Lists are named by their slot in the subgraph.
    var placed = OrderedPlacements(lists: graph.slotCount)
    var indexes = ListIndexes()
    for y in 0..<graph.count {
      let entity = graph.states[y].entity
      for r in relationships[Int(entity.rawValue)] {
        guard let listY = graph.slot(y, r.id) else { continue }
        let range = graph.range(slot: listY)
        for k in range {
          let (i, t) = (k - range.lowerBound, graph.targets[k])
          let x = graph.index(of: t)
          guard keeps(y, r, x) else { continue }
          kept?(y, r, t, x)
          guard let x, let inv = r.inverse else {
            // Outside the subgraph (the copy shares the target), or one way: only this
            // list holds the link.
            let position = r.isOrdered ? placed.place(listY, index: i) : nil
            try emit(
              .link(identities[y], relationship: r.id, target: x.map { identities[$0] } ?? t, position: position))
            continue
          }
          // Lists are replayed member by member, relationships in ID order: the other
          // list has had its turn when it belongs to an earlier member, or to this one
          // under an earlier relationship. If not, the link is emitted in its turn.
          guard x < y || (x == y && inv < r.id) else { continue }
          // Appended to this list (listY); placed among what the other list has so far.
          var position: Int? = nil
          if r.inverseIsOrdered {
            guard let listX = graph.slot(x, inv),
              let j = indexes.index(of: graph.ids[y], in: listX, of: graph)
            else {
              throw StoreError.corrupt("#\(t.rawValue): relationship \(inv.rawValue) lacks its inverse")
            }
            position = placed.place(listX, index: j)
          }
          if r.isOrdered { _ = placed.place(listY, index: i) }
          try emit(.link(identities[x], relationship: inv, target: identities[y], position: position))
        }
      }
    }
  }
}

/// For each ordered list, the original indices of the targets replayed so far, sorted:
/// a target's position is the number replayed before it in the original order.
struct OrderedPlacements {
  /// By list (a slot of the subgraph); empty until the list gets its first target.
  private var filled: [[Int]]

  init(lists: Int) { filled = Array(repeating: [], count: lists) }

  /// Records that the target at `index` of the original list is replayed now, and
  /// returns the position it takes among those replayed so far.
  mutating func place(_ list: Int, index: Int) -> Int {
    Self.insert(index, into: &filled[list])
  }

  private static func insert(_ index: Int, into list: inout [Int]) -> Int {
    // Lists are mostly replayed in order: append without searching.
    guard let last = list.last, last > index else {
      list.append(index)
      return list.count - 1
    }
    var lo = 0
    var hi = list.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if list[mid] < index { lo = mid + 1 } else { hi = mid }
    }
    list.insert(index, at: lo)
    return lo
  }
}

/// Where an object stands in a list of a subgraph, with a dictionary built for long
/// lists only.
struct ListIndexes {
  private var built: [Int: [ObjectID: Int]] = [:]

  mutating func index(of id: ObjectID, in list: Int, of graph: Subgraph) -> Int? {
    let range = graph.range(slot: list)
    if range.count <= 32 { return graph.targets[range].firstIndex(of: id).map { $0 - range.lowerBound } }
    if let table = built[list] { return table[id] }
    var table: [ObjectID: Int] = [:]
    table.reserveCapacity(range.count)
    for k in range { table[graph.targets[k]] = k - range.lowerBound }
    built[list] = table
    return table[id]
  }
}

/// What replaying needs to know of a relationship, as a plain value (no names, so no
/// reference counting in the loops that visit every link).
struct LinkShape: Sendable {
  let id: PropertyID
  let inverse: PropertyID?
  let isOrdered: Bool
  let isToMany: Bool
  /// Whether the inverse exists and is ordered, or to-many.
  let inverseIsOrdered: Bool
  let inverseIsToMany: Bool

  init(_ r: Relationship, model: Model) {
    let back = r.inverseRelationship(in: model)
    id = r.id
    inverse = r.inverse
    isOrdered = r.isOrdered
    isToMany = r.isToMany
    inverseIsOrdered = back?.isOrdered ?? false
    inverseIsToMany = back?.isToMany ?? false
  }

  /// Every entity's relationships, in ID order, by entity ID.
  static func table(_ model: Model) -> [[LinkShape]] {
    model.entities.map { e in e.relationships.map { LinkShape($0, model: model) } }
  }
}
