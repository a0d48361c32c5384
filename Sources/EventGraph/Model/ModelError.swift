/// A model that cannot be used, with the entity and property at fault.
public enum ModelError: Error, Sendable, Hashable, CustomStringConvertible {
  case unknownEntity(String)
  case duplicateEntity(String)
  case duplicateProperty(entity: String, property: String)
  case unknownParent(entity: String, parent: String)
  case inheritanceCycle(entity: String)
  case unknownDestination(entity: String, relationship: String, destination: String)
  case unknownInverse(entity: String, relationship: String, inverse: String)
  case inverseMismatch(entity: String, relationship: String, inverse: String, detail: String)
  case invalidDefault(entity: String, attribute: String, detail: String)
  case invalidCounts(entity: String, relationship: String, detail: String)
  case orderedToOne(entity: String, relationship: String)
  case invalidName(String)
  case tooLarge(String)
  /// A model file that cannot be read: the file, where, and what is wrong.
  case invalidFile(file: String, detail: String)

  public var description: String {
    switch self {
    case .unknownEntity(let e): "unknown entity '\(e)'"
    case .duplicateEntity(let e): "entity '\(e)' is declared twice"
    case .duplicateProperty(let e, let p): "\(e).\(p): property is declared twice"
    case .unknownParent(let e, let p): "\(e): parent entity '\(p)' does not exist"
    case .inheritanceCycle(let e): "\(e): entity inheritance forms a cycle"
    case .unknownDestination(let e, let r, let d): "\(e).\(r): destination entity '\(d)' does not exist"
    case .unknownInverse(let e, let r, let i): "\(e).\(r): inverse '\(i)' does not exist in the destination"
    case .inverseMismatch(let e, let r, let i, let d): "\(e).\(r): inverse '\(i)' \(d)"
    case .invalidDefault(let e, let a, let d): "\(e).\(a): invalid default: \(d)"
    case .invalidCounts(let e, let r, let d): "\(e).\(r): \(d)"
    case .orderedToOne(let e, let r): "\(e).\(r): 'ordered' needs 'toMany'"
    case .invalidName(let n): "invalid name '\(n)': names are letters, digits and '_', not starting with a digit"
    case .tooLarge(let d): "model too large: \(d)"
    case .invalidFile(let f, let d): "\(f): \(d)"
    }
  }
}
