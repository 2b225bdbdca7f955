module github.com/federation-v1/federation

go 1.26.0
