package import EventGraphText
import Foundation

/// Values in the JSON formats: strings, numbers, booleans and `null`; dates as ISO 8601
/// strings, binary as base64, decimals as strings (so no digit is lost). The model file
/// (defaults, bounds) and the store's JSON Lines formats share them, hence `package`.
extension Value {
  /// The JSON form of a value.
  package var json: JSON {
    switch self {
    case .string(let s): .string(s)
    case .int16(let n): .int(Int64(n))
    case .int32(let n): .int(Int64(n))
    case .int64(let n): .int(n)
    case .double(let d): .double(d)
    case .float(let f): .double(Double(f))
    case .decimal(let d): .string(d.description)
    case .boolean(let b): .bool(b)
    case .date(let d): .string(ISO8601.format(d))
    case .binary(let b): .string(Data(b).base64EncodedString())
    case .uuid(let u): .string(u.uuidString)
    case .uri(let s): .string(s)
    // Never the sealed bytes: a reader shows `null` and names the attribute in the object's
    // or event's `"erased"` or `"locked"` list.
    case .sealed: .null
    }
  }

  /// Reads a value of `type` from its JSON form; `nil` for JSON `null`.
  ///
  /// - Throws: ``ValueError`` saying what did not fit.
  package static func fromJSON(_ json: JSON, as type: AttributeType) throws(ValueError) -> Value? {
    switch (json, type) {
    case (.null, _): return nil
    case (.string(let s), .string): return .string(s)
    case (.string(let s), .uri): return .uri(s)
    case (.string(let s), .date):
      guard let d = ISO8601.parse(s) else { throw ValueError(.invalidText, "'\(s)' is not an ISO 8601 date") }
      return .date(d)
    case (.string(let s), .binary):
      guard let d = Data(base64Encoded: s) else { throw ValueError(.invalidText, "'\(s.prefix(40))' is not base64") }
      return .binary([UInt8](d))
    case (.string(let s), .uuid):
      guard let u = UUID(uuidString: s) else { throw ValueError(.invalidText, "'\(s)' is not a UUID") }
      return .uuid(u)
    case (.string(let s), .decimal):
      guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")), !d.isNaN,
        s.allSatisfy({ "0123456789+-.eE".contains($0) })
      else { throw ValueError(.invalidText, "'\(s)' is not a decimal number") }
      return .decimal(d)
    case (.bool(let b), .boolean): return .boolean(b)
    case (.int(let n), _) where type.isNumeric: return try Value.int64(n).converted(to: type)
    case (.double(let d), _) where type.isNumeric: return try Value.double(d).converted(to: type)
    default:
      throw ValueError(.wrongType, "expected \(type.rawValue), got \(json.kindDescription)")
    }
  }
}
