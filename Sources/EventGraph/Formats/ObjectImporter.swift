// The streamed import: lines are read and committed a batch at a time, each batch with every
// relationship whose targets are known by then; a reference to a later line waits for it
// and is linked in the commit that brings it. The state between batches is what links need
// and no more: each id's identity and line, the references still waiting, and the claims
// on to-one relationships that have an inverse (so that two lines cannot disagree unseen).

/// An object the import made (or, when it resumes, made before).
struct ImportedObject {
  var id: ObjectID
  var line: Int32
  var entity: EntityID
  /// Where its to-one relationships that have an inverse keep their claims in
  /// ``ImportState``'s list (one place per such relationship of its entity).
  var claims: Int32 = 0
}

/// A reference from an imported object to an id of the file that has not appeared yet.
struct WaitingReference {
  var source: ImportedObject
  var relationship: PropertyID
  /// The line that names the target.
  var line: Int32
  /// The target's place in an ordered to-many's list, which `list` holds.
  var index: Int32
  var list: TargetList?
}

/// The targets of an ordered to-many as a line lists them, shared by its waiting
/// references so that each is linked at its place when it arrives.
final class TargetList {
  let labels: [String]
  /// Which targets are linked so far, as a Fenwick tree of counts over their indices (one
  /// based inside): the nearest linked target before an index is found in O(log n), so
  /// that a list whose members' lines come after it, in any order, imports in O(n log n)
  /// rather than rescanning the list for each member.
  private var tree: [Int32]

  /// A list whose first `linked` targets are linked already (those known before it waited).
  init(_ labels: [String], linked: Int = 0) {
    self.labels = labels
    tree = [Int32](repeating: 0, count: labels.count + 1)
    for i in 0..<min(linked, labels.count) { add(i, 1) }
  }

  /// Counts target `index` as linked (`by: 1`) or no longer (`by: -1`, an undo).
  func add(_ index: Int, _ by: Int32) {
    var i = index + 1
    while i < tree.count {
      tree[i] += by
      i += i & -i
    }
  }

  /// The index of the nearest linked target before `index`, if any.
  func nearestLinked(before index: Int) -> Int? {
    // How many are linked before `index`, then the index of the last of them.
    var rank: Int32 = 0
    var i = min(index, labels.count)
    while i > 0 {
      rank += tree[i]
      i -= i & -i
    }
    guard rank > 0 else { return nil }
    var position = 0
    var step = 1
    while step * 2 < tree.count { step *= 2 }
    var remaining = rank
    while step > 0 {
      let next = position + step
      if next < tree.count && tree[next] < remaining {
        position = next
        remaining -= tree[next]
      }
      step /= 2
    }
    // `position` is the last one-based place whose count is below `rank`: the rank-th
    // linked target is at the next place, which is index `position`.
    return position
  }
}

/// The claim a line made on a to-one: its target (`nil`: none) and the line (0: no claim yet).
struct ToOneClaim {
  var target: ObjectID?
  var line: Int32

  static let none = ToOneClaim(target: nil, line: 0)
}

/// The state of a streamed import between its commits, and the changes of the batch being
/// committed, undone when that commit does not land.
final class ImportState {
  let model: Model
  var objects: [String: ImportedObject] = [:]
  var waiting: [String: [WaitingReference]] = [:]
  /// The claims on the to-one relationships that have an inverse, a run of places per
  /// object (``ImportedObject/claims``): a list rather than a dictionary, as every
  /// employee of a million has three of them, each claimed once and looked at rarely.
  private var claims: [ToOneClaim] = []
  /// The claims' length when the batch began: the places of its objects go with them.
  private var claimsKept = 0
  /// For each entity, by relationship identifier, the place of each to-one relationship
  /// that has an inverse among its object's places (-1 for the others).
  private let claimPlaces: [[Int16]]
  /// How many waiting references there are (a dictionary's count would count ids).
  var waitingCount = 0

  /// A change of the batch being committed, and how to take it back.
  private enum Undo {
    case object(String)
    case waitingAdded(String)
    case waitingTaken(String, [WaitingReference])
    case claim(Int)
    case listLinked(TargetList, Int)
  }
  private var undo: [Undo] = []

  init(model: Model) {
    self.model = model
    claimPlaces = model.entities.map { e in
      var places = [Int16](repeating: -1, count: e.properties.count)
      for (k, r) in e.relationships.filter({ !$0.isToMany && $0.inverse != nil }).enumerated() {
        places[Int(r.id.rawValue)] = Int16(k)
      }
      return places
    }
  }

  /// Keeps the batch's changes: its commit landed.
  func keep() {
    undo.removeAll(keepingCapacity: true)
    claimsKept = claims.count
  }

  /// Takes the batch's changes back: its commit did not land (or runs again).
  func rollBack() {
    while let u = undo.popLast() {
      switch u {
      case .object(let label): objects[label] = nil
      case .waitingAdded(let label):
        waiting[label]?.removeLast()
        waitingCount -= 1
        if waiting[label]?.isEmpty == true { waiting[label] = nil }
      case .waitingTaken(let label, let refs):
        waiting[label] = refs
        waitingCount += refs.count
      case .claim(let place): claims[place] = .none
      case .listLinked(let list, let index): list.add(index, -1)
      }
    }
    claims.removeSubrange(claimsKept...)
  }

  /// Adds an object of the file, with room for its claims; returns it as added.
  func add(_ label: String, _ object: ImportedObject) -> ImportedObject {
    var o = object
    o.claims = Int32(claims.count)
    let places = claimPlaces[Int(o.entity.rawValue)].lazy.filter { $0 >= 0 }.count
    claims.append(contentsOf: repeatElement(.none, count: places))
    objects[label] = o
    undo.append(.object(label))
    return o
  }

  /// The place of the claims on `object.relationship`, a to-one with an inverse.
  func claimPlace(_ object: ImportedObject, _ relationship: PropertyID) -> Int? {
    let places = claimPlaces[Int(object.entity.rawValue)]
    let r = Int(relationship.rawValue)
    guard r < places.count, places[r] >= 0 else { return nil }
    return Int(object.claims) + Int(places[r])
  }

  /// Counts target `index` of an ordered list as linked, for the batch.
  func linked(_ list: TargetList, _ index: Int) {
    list.add(index, 1)
    undo.append(.listLinked(list, index))
  }

  func wait(for label: String, _ ref: WaitingReference) {
    waiting[label, default: []].append(ref)
    waitingCount += 1
    undo.append(.waitingAdded(label))
  }

  /// The references waiting for `label`, no longer waiting.
  func take(_ label: String) -> [WaitingReference] {
    guard waitingCount > 0, let refs = waiting.removeValue(forKey: label) else { return [] }
    waitingCount -= refs.count
    undo.append(.waitingTaken(label, refs))
    return refs
  }

  /// Records a claim on a to-one, refusing one that names another target than an earlier
  /// claim (both lines named).
  func claim(_ place: Int, _ claim: ToOneClaim, describe: () -> String) throws(FormatError) {
    let earlier = claims[place]
    if earlier.line != 0 {
      guard earlier.target != claim.target else { return }
      throw FormatError(
        line: Int(max(earlier.line, claim.line)),
        message:
          "conflicting claims on \(describe()): line \(min(earlier.line, claim.line)) and line \(max(earlier.line, claim.line)) give it different targets (a to-one and its inverse must agree)"
      )
    }
    claims[place] = claim
    undo.append(.claim(place))
  }

  /// The first reference, in line order, whose target never appeared.
  func firstUnresolved() -> (label: String, ref: WaitingReference)? {
    var first: (String, WaitingReference)?
    for (label, refs) in waiting {
      for r in refs where first.map({ r.line < $0.1.line }) ?? true { first = (label, r) }
    }
    return first
  }
}
