package message_test

import (
	"fmt"
	"net/netip"

	"github.com/rmqpush/rmqpush/message"
)

// A pull body is store records back to back; here two are made with the encoder, the
// second one compressed.
func ExampleDecodeAll() {
	var body []byte
	for i, text := range []string{"hello", "world, compressed"} {
		m := &message.Ext{
			Message: message.Message{
				Topic:      "Orders",
				Body:       []byte(text),
				Properties: message.PropertiesOf(message.Property{Name: message.PropertyTags, Value: "created"}),
			},
			QueueID:     2,
			QueueOffset: int64(40 + i),
			BornHost:    netip.MustParseAddrPort("192.0.2.7:53312"),
			StoreHost:   netip.MustParseAddrPort("192.0.2.1:10911"),
		}
		if i == 1 {
			stored, err := message.Compress(m.Body, message.CompressionZstd)
			if err != nil {
				panic(err)
			}
			m.Body = stored
			m.SysFlag = message.CompressionFlag(message.CompressionZstd)
		}
		var err error
		if body, err = message.AppendStoreRecord(body, m); err != nil {
			panic(err)
		}
	}

	msgs, err := message.DecodeAll(body)
	if err != nil {
		// A *message.DecodeError names the bad record's offset; msgs holds the ones before it.
		fmt.Println(err)
	}
	for _, m := range msgs {
		fmt.Printf("%s offset %d tag %s: %q\n", m.Queue(), m.QueueOffset, m.Tags(), m.Body)
	}

	_, err = message.DecodeAll(body[:len(body)-1])
	fmt.Println(err)
	// Output:
	// Orders@:2 offset 40 tag created: "hello"
	// Orders@:2 offset 41 tag created: "world, compressed"
	// message: record at byte 115: storeSize 140 exceeds the 139 bytes left
}
