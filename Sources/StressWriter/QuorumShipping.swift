import EventGraph
import EventGraphReplication
import NATSClient

/// The stress writer as a replicated primary in quorum mode.
enum QuorumShipping {
  static func start(_ store: EventStore, urls: [String], stream: String?, security: NATSSecurity) throws -> Shipper {
    let js = try JetStream(NATSConnection(urls: urls, name: "StressWriter", security: security), timeout: 5)
    let shipper = try Shipper(store: store, jetStream: js, stream: stream, mode: .quorum)
    shipper.start()
    return shipper
  }
}
