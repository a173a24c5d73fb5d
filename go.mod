module github.com/rmqpush/rmqpush

go 1.26

require (
	github.com/google/btree v1.1.3
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/sirupsen/logrus v1.10.2
	github.com/stretchr/testify v1.12.1
	go.uber.org/atomic v1.12.0
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
