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
}

/// A reference from an imported object to an id of the file that has not appeared yet.
struct WaitingReference {
  var source: ObjectID
  var sourceEntity: EntityID
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
  init(_ labels: [String]) { self.labels = labels }
}

/// A to-one relationship of an object: the place two lines may claim.
struct ToOneSlot: Hashable {
  var object: ObjectID
  var relationship: PropertyID
}

/// The claim a line made on a to-one: its target (`nil`: none) and the line.
struct ToOneClaim {
  var target: ObjectID?
  var line: Int32
}

/// The state of a streamed import between its commits, and the changes of the batch being
/// committed, undone when that commit does not land.
final class ImportState {
  let model: Model
  var objects: [String: ImportedObject] = [:]
  var waiting: [String: [WaitingReference]] = [:]
  var claims: [ToOneSlot: ToOneClaim] = [:]
  /// How many waiting references there are (a dictionary's count would count ids).
  var waitingCount = 0

  /// A change of the batch being committed, and how to take it back.
  private enum Undo {
    case object(String)
    case waitingAdded(String)
    case waitingTaken(String, [WaitingReference])
    case claim(ToOneSlot)
  }
  private var undo: [Undo] = []

  init(model: Model) { self.model = model }

  /// Keeps the batch's changes: its commit landed.
  func keep() { undo.removeAll(keepingCapacity: true) }

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
      case .claim(let slot): claims[slot] = nil
      }
    }
  }

  func add(_ label: String, _ object: ImportedObject) {
    objects[label] = object
    undo.append(.object(label))
  }

  func wait(for label: String, _ ref: WaitingReference) {
    waiting[label, default: []].append(ref)
    waitingCount += 1
    undo.append(.waitingAdded(label))
  }

  /// The references waiting for `label`, no longer waiting.
  func take(_ label: String) -> [WaitingReference] {
    guard let refs = waiting.removeValue(forKey: label) else { return [] }
    waitingCount -= refs.count
    undo.append(.waitingTaken(label, refs))
    return refs
  }

  /// Records a claim on a to-one, refusing one that names another target than an earlier
  /// claim (both lines named).
  func claim(_ slot: ToOneSlot, _ claim: ToOneClaim, describe: () -> String) throws(FormatError) {
    if let earlier = claims[slot] {
      guard earlier.target != claim.target else { return }
      throw FormatError(
        line: Int(max(earlier.line, claim.line)),
        message:
          "conflicting claims on \(describe()): line \(min(earlier.line, claim.line)) and line \(max(earlier.line, claim.line)) give it different targets (a to-one and its inverse must agree)"
      )
    }
    claims[slot] = claim
    undo.append(.claim(slot))
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
